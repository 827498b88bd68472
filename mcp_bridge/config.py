"""Bridge settings, from the environment (stdio) or passed in by the hosted wiring (Django settings)."""

from __future__ import annotations

import os
from dataclasses import dataclass

DEFAULT_MAX_OUTPUT_CHARS = 40_000
DEFAULT_UPLOAD_WAIT_SECONDS = 60.0
DEFAULT_MAX_REQUEST_BYTES = 16 * 1024 * 1024
# The files an upload may be, in words. The REST API decides (exograph.documents.validation.ACCEPTED_LABEL, which
# the hosted wiring passes in); the stdio bridge talks to a server it may not import, so it starts from that rule as
# of this release (tests/mcp/test_upload_types.py fails when the two differ) and the server's refusal names its own.
DEFAULT_UPLOAD_TYPES = "PDF .pdf, Word .docx, plain text .txt, Markdown .md"


class ConfigError(ValueError):
    """A bad or missing setting; the message names the variable and the fix."""


def _env_number(name: str, default: float, *, minimum: float) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a number; got {raw[:20]!r}.") from None
    if value < minimum:
        raise ConfigError(f"{name} must be at least {minimum:g}; got {raw[:20]!r}.")
    return value


@dataclass(frozen=True)
class BridgeSettings:
    max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS
    upload_wait_seconds: float = DEFAULT_UPLOAD_WAIT_SECONDS
    upload_poll_seconds: float = 1.0
    # What one MCP request may carry (hosted: the HTTP body cap; it bounds inline base64 uploads).
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES
    # stdio reads file_path locally; hosted forwards it to the REST API (which allows it only under its upload root).
    read_local_files: bool = True
    # The files upload_document takes, in words (tool description, hints); the server's rule, see above.
    upload_types: str = DEFAULT_UPLOAD_TYPES

    @property
    def max_inline_upload_bytes(self) -> int:
        """The largest file an inline base64 upload can carry within max_request_bytes (base64 is 4/3 larger)."""
        return max(0, (self.max_request_bytes - 16 * 1024) * 3 // 4)

    @classmethod
    def from_env(cls, **overrides: object) -> BridgeSettings:
        values: dict[str, object] = {
            "max_output_chars": int(
                _env_number("EXOGRAPH_MCP_MAX_OUTPUT_CHARS", DEFAULT_MAX_OUTPUT_CHARS, minimum=1000)
            ),
            "upload_wait_seconds": _env_number(
                "EXOGRAPH_MCP_UPLOAD_WAIT_SECONDS", DEFAULT_UPLOAD_WAIT_SECONDS, minimum=0
            ),
        }
        values.update(overrides)
        return cls(**values)  # type: ignore[arg-type]


@dataclass(frozen=True)
class StdioSettings:
    api_url: str
    api_key: str
    graph_scope: str | None

    @classmethod
    def from_env(cls) -> StdioSettings:
        url = os.environ.get("EXOGRAPH_API_URL", "").strip() or "http://127.0.0.1:8000"
        if not url.startswith(("http://", "https://")):
            raise ConfigError(f"EXOGRAPH_API_URL must start with http:// or https://; got {url[:60]!r}.")
        key = os.environ.get("EXOGRAPH_API_KEY", "").strip()
        if not key:
            raise ConfigError(
                "EXOGRAPH_API_KEY is not set. Create an API key on the ExoGraph API keys page and set it "
                "in the MCP client's env for this server."
            )
        scope = os.environ.get("EXOGRAPH_GRAPH_SCOPE", "").strip().lower()
        if scope not in ("", "world", "private"):
            raise ConfigError(f"EXOGRAPH_GRAPH_SCOPE must be 'world' or 'private'; got {scope[:20]!r}.")
        return cls(api_url=url, api_key=key, graph_scope=scope or None)
