"""The hosted bridge: streamable HTTP at /mcp on the service's own ASGI application.

Stateless HTTP (each request is its own MCP session, so no connection shares state), JSON responses,
Host/Origin checked against explicit allow-lists (DNS-rebinding protection), bodies capped. Every
request needs `Authorization: Bearer <API key>` (or `X-API-Key`); the key is checked before the MCP app
and then forwarded, with `X-Graph-Scope`, to the REST API in-process (httpx over ASGI, no network hop),
so keys, scopes, rate limits, credits and errors are exactly the REST API's.

The SDK's session manager needs a running task group: `lifespan` (route the ASGI "lifespan" scope here)
starts it; under a server that sends no lifespan (daphne, `uvicorn --lifespan off`) the first request does.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver import Context
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from mcp_bridge.client import ExoGraphClient
from mcp_bridge.config import BridgeSettings
from mcp_bridge.tools import ExoGraphMCPServer, build_server

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class KeyRejected:
    """Why a key was refused (from the accounts service): shown to the caller as a 401."""

    code: str
    message: str
    hint: str


# Resolves a presented key: None when it is valid, else why not. Injected by the hosted wiring.
KeyVerifier = Callable[[str], Awaitable[KeyRejected | None]]

NO_KEY = KeyRejected(
    code="unauthenticated",
    message="The MCP endpoint needs an API key.",
    hint="Send 'Authorization: Bearer exo_…' (create a key on the API keys page).",
)


def presented_key(headers: Any) -> str | None:
    """The API key of a request: `Authorization: Bearer …` or `X-API-Key`; None when absent or another scheme."""
    authorization = (headers.get("authorization") or "").strip()
    if authorization:
        scheme, _, credentials = authorization.partition(" ")
        return credentials.strip() or None if scheme.lower() == "bearer" else None
    return (headers.get("x-api-key") or "").strip() or None


def host_patterns(hosts: Sequence[str]) -> list[str]:
    """Django-style allowed hosts as the SDK's patterns (exact, and any port); wildcards cannot be expressed."""
    patterns: list[str] = []
    for host in hosts:
        host = host.strip()
        if not host or host.startswith(".") or host == "*":
            logger.warning(
                "MCP allowed hosts: %r is a wildcard; list the exact host names in EXOGRAPH_MCP_ALLOWED_HOSTS", host
            )
            continue
        patterns += [host, f"{host}:*"]
    return patterns


async def _send_json(
    send: Callable[[dict[str, Any]], Awaitable[None]],
    status: int,
    body: dict[str, Any],
    headers: list[tuple[bytes, bytes]] | None = None,
) -> None:
    payload = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


class HostedMCP:
    """ASGI pieces of the hosted bridge: `router(fallback)` for http and `lifespan` for the lifespan scope."""

    def __init__(
        self,
        *,
        rest_app: Any,
        verify_key: KeyVerifier,
        settings: BridgeSettings,
        allowed_hosts: Sequence[str],
        allowed_origins: Sequence[str],
        path: str = "/mcp",
    ) -> None:
        self.rest_app = rest_app
        self.verify_key = verify_key
        self.settings = settings
        self.path = path.rstrip("/") or "/mcp"
        self.security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=host_patterns(allowed_hosts),
            allowed_origins=[o.rstrip("/") for o in allowed_origins if o.strip()],
        )
        self._loop: asyncio.AbstractEventLoop | None = None
        self._app: Any = None
        self._stop: asyncio.Event | None = None
        self._runner: asyncio.Task[None] | None = None
        self._lock: asyncio.Lock | None = None

    # --- the MCP server, its client and its session manager ---------------------------------

    @asynccontextmanager
    async def _client_for(self, ctx: Context) -> AsyncIterator[ExoGraphClient]:
        headers = ctx.headers or {}
        key = presented_key(headers) or ""
        raw_scope = (headers.get("x-graph-scope") or "").strip()
        client = ExoGraphClient.in_process(
            asgi_app=self.rest_app,
            api_key=key,
            host=headers.get("host") or "localhost",
            extra_headers={"X-Graph-Scope": raw_scope} if raw_scope else None,
        )
        try:
            yield client
        finally:
            await client.aclose()

    @staticmethod
    def _default_scope(ctx: Context) -> str | None:
        raw = ((ctx.headers or {}).get("x-graph-scope") or "").strip().lower()
        return raw if raw in ("world", "private") else None

    def build(self) -> tuple[ExoGraphMCPServer, Any]:
        server = build_server(client_for=self._client_for, settings=self.settings, default_scope=self._default_scope)
        app = server.streamable_http_app(
            streamable_http_path=self.path,
            stateless_http=True,
            json_response=True,
            transport_security=self.security,
            max_request_body_size=self.settings.max_request_bytes,
        )
        return server, app

    async def start(self) -> None:
        """Start the session manager on this event loop (once; again on a new loop, e.g. a restarted server)."""
        loop = asyncio.get_running_loop()
        if self._loop is loop and self._runner is not None and not self._runner.done():
            return
        if self._lock is None or self._loop is not loop:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._loop is loop and self._runner is not None and not self._runner.done():
                return
            server, app = self.build()
            started, stop = asyncio.Event(), asyncio.Event()

            async def run() -> None:
                async with server.session_manager.run():
                    started.set()
                    await stop.wait()

            runner = loop.create_task(run(), name="exograph-mcp-session-manager")
            waiter = loop.create_task(started.wait())
            await asyncio.wait({runner, waiter}, return_when=asyncio.FIRST_COMPLETED)
            if runner.done():
                waiter.cancel()
                runner.result()  # raises what stopped it
            self._loop, self._app, self._stop, self._runner = loop, app, stop, runner
            logger.info("mcp: session manager started")

    async def stop(self) -> None:
        if self._stop is not None and self._runner is not None and self._loop is asyncio.get_running_loop():
            self._stop.set()
            await self._runner
            logger.info("mcp: session manager stopped")
        self._runner = None

    async def lifespan(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """The ASGI lifespan protocol: start the session manager at startup, stop it at shutdown."""
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.start()
                except Exception as exc:  # reported to the server, which refuses to start
                    logger.exception("mcp: session manager failed to start")
                    await send({"type": "lifespan.startup.failed", "message": type(exc).__name__})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.stop()
                await send({"type": "lifespan.shutdown.complete"})
                return

    # --- requests --------------------------------------------------------------------------

    def is_mcp_path(self, path: str) -> bool:
        return path == self.path or path.startswith(self.path + "/")

    async def handle(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """One HTTP request to /mcp: 401 without a valid key, else the SDK's streamable HTTP app."""
        from starlette.datastructures import Headers

        headers = Headers(scope=scope)
        if scope.get("method") != "OPTIONS":
            key = presented_key(headers)
            rejected = NO_KEY if key is None else await self.verify_key(key)
            if rejected is not None:
                logger.info("mcp: refused a request without a valid API key (%s)", rejected.code)
                body = {"error": {"code": rejected.code, "message": rejected.message, "hint": rejected.hint}}
                await _send_json(send, 401, body, [(b"www-authenticate", b'Bearer realm="mcp"')])
                return
        await self.start()
        await self._app(scope, receive, send)

    def router(self, fallback: Any) -> ASGIApp:
        """An http ASGI app: /mcp to the bridge, everything else to `fallback` (the Django app)."""

        async def route(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "http" and self.is_mcp_path(scope.get("path", "")):
                await self.handle(dict(scope), receive, send)
            else:
                await fallback(scope, receive, send)

        return route
