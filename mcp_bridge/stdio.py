"""`exograph-mcp`: the bridge over stdio, for Claude Desktop, Claude Code, Cursor and other local MCP clients.

Configured by EXOGRAPH_API_URL (default http://127.0.0.1:8000), EXOGRAPH_API_KEY and EXOGRAPH_GRAPH_SCOPE
(world|private; default: the API's, private). stdout carries only the protocol; logs go to stderr.
"""

from __future__ import annotations

import logging
import os
import sys

import anyio

from mcp_bridge.client import ExoGraphClient, mask_secrets
from mcp_bridge.config import BridgeSettings, ConfigError, StdioSettings
from mcp_bridge.tools import build_server, fixed_client


class MaskSecretsFilter(logging.Filter):
    """Masks API keys and Bearer tokens in every log record (message and arguments)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = mask_secrets(record.getMessage())
        record.args = None
        return True


def configure_logging(level: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(MaskSecretsFilter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # The HTTP client logs every request line at INFO; keep it quiet.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    # The SDK logs a failed tool call with its message, which can quote the caller's input (queries, names).
    logging.getLogger("mcp").setLevel(logging.WARNING)


async def serve(stdio: StdioSettings, settings: BridgeSettings) -> None:
    async with ExoGraphClient(base_url=stdio.api_url, api_key=stdio.api_key, scope=stdio.graph_scope) as client:
        server = build_server(
            client_for=fixed_client(client), settings=settings, default_scope=lambda ctx: stdio.graph_scope
        )
        await server.run_stdio_async()


def main() -> int:
    level = os.environ.get("EXOGRAPH_MCP_LOG_LEVEL", "INFO").strip().upper() or "INFO"
    configure_logging(level if level in ("DEBUG", "INFO", "WARNING", "ERROR") else "INFO")
    try:
        stdio = StdioSettings.from_env()
        settings = BridgeSettings.from_env(read_local_files=True)
    except ConfigError as exc:
        print(f"exograph-mcp: {exc}", file=sys.stderr)
        return 2
    logging.getLogger(__name__).info("exograph-mcp: serving %s over stdio", stdio.api_url)
    anyio.run(serve, stdio, settings)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
