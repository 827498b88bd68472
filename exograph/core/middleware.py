"""ASGI middleware in front of Django: request body limits (refused before the body is read), the request gate
(at most REQUEST_CONCURRENCY requests inside Django at once) and the access log."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
import uuid
import weakref
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, resolve
from django.utils.functional import SimpleLazyObject, empty

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB".replace(".0 MB", " MB")


def request_body_limit(path: str) -> int:
    """The most bytes a request body to path may have: REQUEST_BODY_LIMITS by URL name, else REQUEST_MAX_BODY_BYTES."""
    try:
        match = resolve(path)
    except Resolver404:
        return int(settings.REQUEST_MAX_BODY_BYTES)
    return int(settings.REQUEST_BODY_LIMITS.get(match.view_name, settings.REQUEST_MAX_BODY_BYTES))


def _app_path(scope: Scope) -> str:
    """The request's path below the ASGI root_path (what Django resolves)."""
    path = str(scope.get("path", ""))
    root = str(scope.get("root_path", ""))
    return path[len(root) :] if root and path.startswith(root) else path


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None  # the HTTP server refuses a malformed Content-Length itself
    return None


async def _send_too_large(send: Send, *, path: str, limit: int) -> None:
    message = f"The request body is larger than this endpoint's limit of {_megabytes(limit)} ({limit} bytes)."
    if path.startswith("/api/"):
        hint = (
            "Send a smaller body; uploads take files up to "
            f"{_megabytes(settings.DOCUMENTS_MAX_BYTES)} (base64 in JSON or multipart/form-data)."
        )
        body = json.dumps({"error": {"code": "payload_too_large", "message": message, "hint": hint}}).encode()
        content_type = b"application/json"
    else:
        body = f"<!doctype html><title>Too large</title><h1>Request too large</h1><p>{message}</p>".encode()
        content_type = b"text/html; charset=utf-8"
    await _send_response(send, status=413, content_type=content_type, body=body, headers=[(b"connection", b"close")])


async def _send_response(
    send: Send, *, status: int, content_type: bytes, body: bytes, headers: list[tuple[bytes, bytes]]
) -> None:
    """A whole response this middleware answers itself (Django never saw the request)."""
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", content_type), (b"content-length", str(len(body)).encode()), *headers],
        }
    )
    await send({"type": "http.response.body", "body": body})


class RequestBodyLimitMiddleware:
    """Answer 413 on a Content-Length past the endpoint's limit, or as soon as a chunked body passes it.

    Django's ASGI handler reads the whole body before any view runs, so the limit must act here:
    a declared length is refused before reading a byte; an undeclared (chunked) body is read only
    up to the limit, then Django is told the client left and the 413 is sent in its place.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        limit = request_body_limit(_app_path(scope))
        length = _content_length(scope)
        if length is not None and length > limit:
            await _send_too_large(send, path=path, limit=limit)
            return

        received = 0
        exceeded = False
        started = False

        async def limited_receive() -> Message:
            nonlocal received, exceeded
            if exceeded:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    exceeded = True
                    return {"type": "http.disconnect"}
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        await self.app(scope, limited_receive, tracking_send)
        if exceeded and not started:
            await _send_too_large(send, path=path, limit=limit)


# --- Request gate ----------------------------------------------------------------------------

gate_logger = logging.getLogger(__name__)
# Retry-After (seconds) of the 503 server_busy a request gets when no slot frees up in time.
SERVER_BUSY_RETRY_AFTER = 5


async def _send_server_busy(send: Send, *, path: str, waited: float) -> None:
    from exograph.core.api import error_body

    message = (
        f"The service is at capacity: this request waited {waited:.3g} s for a free slot and was not served; "
        "nothing was charged or changed."
    )
    if path.startswith("/api/"):
        hint = f"Retry in {SERVER_BUSY_RETRY_AFTER} s (Retry-After)."
        body = json.dumps(
            error_body("server_busy", message, hint, {"retry_after": SERVER_BUSY_RETRY_AFTER}), separators=(",", ":")
        ).encode()
        content_type = b"application/json"
    else:
        body = (
            '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Busy · ExoGraph</title></head>'
            f"<body><h1>ExoGraph is busy</h1><p>{message} Retry in {SERVER_BUSY_RETRY_AFTER} seconds.</p></body></html>"
        ).encode()
        content_type = b"text/html; charset=utf-8"
    await _send_response(
        send,
        status=503,
        content_type=content_type,
        body=body,
        headers=[(b"retry-after", str(SERVER_BUSY_RETRY_AFTER).encode())],
    )


class RequestGateMiddleware:
    """At most REQUEST_CONCURRENCY HTTP requests inside Django at once; the others wait here, on the event loop.

    Under Django's ASGI handler each request in flight runs its sync code on a thread of its own and holds one
    pooled database connection until it ends, so without a bound every request past the pool's max_size waits
    inside the pool and fails after EXOGRAPH_DB_POOL_TIMEOUT (503 database_unavailable). Here a waiting request
    holds neither a thread nor a connection. One that gets no slot within REQUEST_QUEUE_TIMEOUT_SECONDS is
    answered 503 server_busy with Retry-After: bounded, never a hang. The health endpoints
    (REQUEST_GATE_EXEMPT, by URL name) pass without a slot, so a full gate does not look like a dead process.
    Only Django is gated: /mcp's tools call it in-process (gating /mcp too would deadlock once every slot is
    held by an MCP request waiting on its own inner call); WebSockets are not HTTP and pass through.

    The size is read from settings on the first request of each event loop (one per server process).
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore | None] = (
            weakref.WeakKeyDictionary()
        )

    def _gate(self) -> asyncio.Semaphore | None:
        loop = asyncio.get_running_loop()
        if loop not in self._gates:
            size = int(settings.REQUEST_CONCURRENCY)
            self._gates[loop] = asyncio.Semaphore(size) if size > 0 else None
        return self._gates[loop]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        gate = self._gate() if scope["type"] == "http" else None
        if gate is None or _gate_exempt(_app_path(scope)):
            await self.app(scope, receive, send)
            return
        started = time.monotonic()
        timeout = float(settings.REQUEST_QUEUE_TIMEOUT_SECONDS)
        try:
            async with asyncio.timeout(timeout):
                await gate.acquire()  # a free slot: returns at once
        except TimeoutError:
            ids = scope.get(LOG_SCOPE_KEY) or {}
            gate_logger.warning(
                "server busy: no request slot within %.0f s; answered 503",
                timeout,
                extra={"request_id": ids.get("request_id"), "slots": settings.REQUEST_CONCURRENCY},
            )
            await _send_server_busy(send, path=str(scope.get("path", "")), waited=time.monotonic() - started)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            gate.release()


def _gate_exempt(path: str) -> bool:
    try:
        match = resolve(path)
    except Resolver404:
        return False
    return match.url_name in settings.REQUEST_GATE_EXEMPT


# --- Access log ------------------------------------------------------------------------------

access_logger = logging.getLogger("exograph.access")
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
LOG_SCOPE_KEY = "exograph.log"


class AccessLogMiddleware:
    """One line per HTTP request: method, path (never the query string), status, duration and ids.

    Replaces uvicorn's access log (run with --no-access-log), which writes full URLs: a key sent in a
    query string would land in the logs. The request id is the client's X-Request-ID if it is a plain
    token, else a new one; it is echoed in the response. Django fills in the account and key ids
    (AccessLogIdsMiddleware) through the scope.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        inbound = dict(scope.get("headers", [])).get(b"x-request-id", b"").decode("latin1")
        request_id = inbound if _REQUEST_ID.match(inbound) else uuid.uuid4().hex
        ids: dict[str, Any] = {"request_id": request_id}
        scope[LOG_SCOPE_KEY] = ids
        status = 500

        async def logging_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                message = {**message, "headers": [*message.get("headers", []), (b"x-request-id", request_id.encode())]}
            await send(message)

        try:
            await self.app(scope, receive, logging_send)
        finally:
            duration_ms = round((time.perf_counter() - start) * 1000, 1)
            fields = {
                "request_id": request_id,
                "method": scope.get("method", ""),
                "path": scope.get("path", ""),
                "status": status,
                "duration_ms": duration_ms,
                "user_id": ids.get("user_id"),
                "api_key_id": ids.get("api_key_id"),
            }
            access_logger.info(
                "%s %s %s %.1fms user_id=%s api_key_id=%s request_id=%s",
                fields["method"],
                fields["path"],
                status,
                duration_ms,
                fields["user_id"] or "-",
                fields["api_key_id"] or "-",
                request_id,
                extra={"access": fields},
            )


class AccessLogIdsMiddleware:
    """Django middleware: hands the account and API-key ids of the request to AccessLogMiddleware."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        ids = getattr(request, "scope", {}).get(LOG_SCOPE_KEY)
        if isinstance(ids, dict):
            user: Any = request.__dict__.get("user")  # never force a session lookup just to log
            if isinstance(user, SimpleLazyObject):
                wrapped = user.__dict__.get("_wrapped", empty)
                user = None if wrapped is empty else wrapped
            if user is not None and getattr(user, "is_authenticated", False):
                ids["user_id"] = user.pk
            key = getattr(request, "api_key", None)
            if key is not None:
                ids["api_key_id"] = getattr(key, "id", None)
        return response


class UntextMiddleware:
    """Django middleware: a query parameter or header holding a NUL or a lone UTF-16 surrogate is a 400 naming it
    (the JSON error envelope under /api/, a plain 400 elsewhere), before any view, ORM or renderer sees it. Bodies
    are checked by the parsers (exograph.core.parsers), which name the body field."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        from django.http import HttpResponseBadRequest, JsonResponse

        from exograph.core.api import error_body
        from exograph.core.errors import ValidationError
        from exograph.core.parsers import untext_check, untext_check_querydict

        try:
            untext_check_querydict(request.GET)
            untext_check({f"header {name}": value for name, value in request.headers.items()})
        except ValidationError as exc:
            if request.path.startswith("/api/"):
                return JsonResponse(error_body(exc.code, exc.message, exc.hint, exc.extra), status=exc.status)
            return HttpResponseBadRequest(exc.message, content_type="text/plain; charset=utf-8")
        return self.get_response(request)
