"""Wiring of the hosted MCP bridge (mcp_bridge.hosted) into the service's ASGI application.

This side owns what the bridge must not import: Django settings and the API key check. The bridge
itself only talks to the REST API (in-process, over the Django ASGI app).
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings

from mcp_bridge.config import BridgeSettings
from mcp_bridge.hosted import HostedMCP, KeyRejected


async def api_key_check(raw: str) -> KeyRejected | None:
    """None when `raw` is an active API key, else why not (the accounts service's reason and fix)."""
    from exograph.accounts.services import api_key_authenticate
    from exograph.core.errors import Unauthenticated

    try:
        await sync_to_async(api_key_authenticate)(raw=raw)
    except Unauthenticated as exc:
        return KeyRejected(code=exc.code, message=exc.message, hint=exc.hint)
    return None


def hosted_mcp(rest_app: Any) -> HostedMCP:
    """The /mcp bridge over `rest_app` (the Django ASGI application), configured from settings."""
    from exograph.documents.validation import ACCEPTED_LABEL

    return HostedMCP(
        rest_app=rest_app,
        verify_key=api_key_check,
        settings=BridgeSettings(
            max_output_chars=settings.MCP_MAX_OUTPUT_CHARS,
            upload_wait_seconds=settings.MCP_UPLOAD_WAIT_SECONDS,
            max_request_bytes=settings.MCP_MAX_REQUEST_BYTES,
            # Hosted: a file_path names a file on this server, so it goes to the REST API, which allows it
            # only under EXOGRAPH_UPLOAD_ROOT (off by default).
            read_local_files=False,
            # The files upload_document takes: the upload rule's own words (the REST API and the web form's).
            upload_types=ACCEPTED_LABEL,
        ),
        allowed_hosts=settings.MCP_ALLOWED_HOSTS,
        allowed_origins=settings.MCP_ALLOWED_ORIGINS,
    )
