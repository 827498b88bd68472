"""How an agent connects: the copy-paste MCP client configs shown on the MCP setup page and the landing page."""

from __future__ import annotations

import json

from django.http import HttpRequest


def mcp_configs(request: HttpRequest) -> dict[str, str]:
    """Copy-paste MCP client configs; the key stays a placeholder (keys are shown once, on creation)."""
    base = request.build_absolute_uri("/").rstrip("/")
    key = "exo_YOUR_API_KEY"
    # The stdio bridge installed by `make` as .venv/bin/exograph-mcp (mcp_bridge/stdio.py reads these variables).
    server = {"command": "exograph-mcp", "env": {"EXOGRAPH_API_URL": base, "EXOGRAPH_API_KEY": key}}
    return {
        "base": base,
        "hosted_url": f"{base}/mcp",
        "key": key,
        "claude_desktop": json.dumps({"mcpServers": {"exograph": server}}, indent=2),
        "claude_code": f'claude mcp add --transport http exograph {base}/mcp --header "Authorization: Bearer {key}"',
        "claude_code_stdio": (
            f"claude mcp add exograph --env EXOGRAPH_API_URL={base} --env EXOGRAPH_API_KEY={key} -- exograph-mcp"
        ),
        "cursor": json.dumps(
            {"mcpServers": {"exograph": {"url": f"{base}/mcp", "headers": {"Authorization": f"Bearer {key}"}}}},
            indent=2,
        ),
    }
