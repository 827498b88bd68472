"""A reusable fake HTTP server: threaded http.server on 127.0.0.1, an OS-chosen port, recorded requests.

Subclass `FakeHTTPServer` and implement `handle(request) -> Reply` to speak an API. Tests can then
script failures ahead of the normal answers::

    with FakeThing() as server:
        server.fail_next(500, {"error": {"message": "boom"}})   # the next request gets a 500
        server.fail_next(200, delay=5)                            # the one after that hangs for 5 s
        ...
        assert server.requests[0].headers["Authorization"] == "Bearer sk-test"
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # keys as sent; look up with .header() for case-insensitivity
    body: bytes

    def header(self, name: str) -> str | None:
        for key, value in self.headers.items():
            if key.lower() == name.lower():
                return value
        return None

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # dict/list -> JSON; bytes/str -> as is; None -> empty
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering (to provoke client timeouts)
    content_type: str | None = None  # overrides the type guessed from the body (e.g. text/event-stream)

    def encoded(self) -> tuple[bytes, str]:
        if self.content_type is not None:
            if isinstance(self.body, dict | list):
                return json.dumps(self.body).encode(), self.content_type
            raw = self.body if isinstance(self.body, bytes) else str(self.body or "").encode()
            return raw, self.content_type
        if self.body is None:
            return b"", "application/json"
        if isinstance(self.body, bytes):
            return self.body, "application/octet-stream"
        if isinstance(self.body, str):
            return self.body.encode(), "text/plain; charset=utf-8"
        return json.dumps(self.body).encode(), "application/json"


class FakeHTTPServer:
    """Base class. Use as a context manager; `url` is http://127.0.0.1:<port>."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self._scripted: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- what subclasses implement -------------------------------------------------------------

    def handle(self, request: RecordedRequest) -> Reply:
        return Reply(404, {"error": {"message": f"No route for {request.method} {request.path}"}})

    # --- scripting -------------------------------------------------------------------------------

    def fail_next(
        self,
        status: int,
        body: Any = None,
        *,
        times: int = 1,
        headers: dict[str, str] | None = None,
        delay: float = 0.0,
    ) -> None:
        """Answer the next `times` requests with this reply instead of the normal one."""
        with self._lock:
            for _ in range(times):
                self._scripted.append(Reply(status, body, dict(headers or {}), delay))

    def reply_next(self, reply: Reply) -> None:
        """Answer the next request with this exact reply (any body and content type) instead of the normal one."""
        with self._lock:
            self._scripted.append(reply)

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self._scripted.clear()

    # --- lifecycle -----------------------------------------------------------------------------

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Self:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, like real APIs; every reply has Content-Length

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                request = RecordedRequest(
                    method=self.command,
                    path=self.path,
                    headers=dict(self.headers.items()),
                    body=self.rfile.read(length) if length else b"",
                )
                reply = server._next_reply(request)
                if reply.delay:
                    time.sleep(reply.delay)
                payload, content_type = reply.encoded()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
                    self.close_connection = True

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

            def log_message(self, format: str, *args: Any) -> None:  # quiet test output
                return

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name=type(self).__name__, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _next_reply(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            scripted = self._scripted.popleft() if self._scripted else None
        return scripted if scripted is not None else self.handle(request)
