"""Request bodies past the endpoint's limit are refused with 413 before they are read, over the real ASGI app."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from exograph.asgi import application

CHUNK = 64 * 1024


class ChunkedClient:
    """Drive the ASGI application like an HTTP server would, counting how much of the body it pulls."""

    def __init__(self, *, total: int, declare_length: bool) -> None:
        self.total = total
        self.declare_length = declare_length
        self.pulled = 0
        self.status: int | None = None
        self.body = b""

    async def run(self, method: str, path: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
        done = asyncio.Event()
        sent = 0
        all_headers = [(b"host", b"127.0.0.1"), (b"content-type", b"application/json"), *(headers or [])]
        if self.declare_length:
            all_headers.append((b"content-length", str(self.total).encode()))
        scope: dict[str, Any] = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": method,
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "root_path": "",
            "query_string": b"",
            "headers": all_headers,
            "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 8000),
        }

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if sent < self.total:
                size = min(CHUNK, self.total - sent)
                sent += size
                self.pulled = sent
                return {"type": "http.request", "body": b"[" * size, "more_body": sent < self.total}
            await done.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                self.status = message["status"]
            elif message["type"] == "http.response.body":
                self.body += message.get("body", b"")
                if not message.get("more_body"):
                    done.set()

        await application(scope, receive, send)


def _post(path: str, *, total: int, declare_length: bool) -> ChunkedClient:
    client = ChunkedClient(total=total, declare_length=declare_length)
    asyncio.run(client.run("POST", path))
    return client


def test_declared_length_past_the_limit_is_413_before_reading_a_byte(settings):
    client = _post("/api/v1/keys/", total=250 * 1024 * 1024, declare_length=True)
    assert client.status == 413
    assert client.pulled == 0
    error = json.loads(client.body)["error"]
    assert error["code"] == "payload_too_large"
    assert f"{settings.REQUEST_MAX_BODY_BYTES} bytes" in error["message"]


def test_chunked_body_past_the_limit_is_413_and_read_only_up_to_the_limit(settings):
    client = _post("/api/v1/graphs/", total=250 * 1024 * 1024, declare_length=False)
    assert client.status == 413
    assert client.pulled <= settings.REQUEST_MAX_BODY_BYTES + CHUNK
    assert "limit of 1 MB" in json.loads(client.body)["error"]["message"]


def test_chunked_body_past_the_upload_limit_stops_there(settings):
    settings.REQUEST_BODY_LIMITS = {**settings.REQUEST_BODY_LIMITS, "api:documents": 3 * 1024 * 1024}
    client = _post("/api/v1/documents/", total=250 * 1024 * 1024, declare_length=False)
    assert client.status == 413
    assert client.pulled <= 3 * 1024 * 1024 + CHUNK


def test_uploads_have_their_own_larger_limit(settings):
    # 2 MB is past the JSON limit but well within an upload's: it reaches the view (401 without a key).
    client = _post("/api/v1/documents/", total=2 * 1024 * 1024, declare_length=True)
    assert client.status == 401
    assert client.pulled == 2 * 1024 * 1024
    assert settings.DOCUMENTS_UPLOAD_MAX_BODY_BYTES > settings.DOCUMENTS_MAX_BYTES * 4 // 3


def test_body_within_the_limit_reaches_django(settings):
    client = _post("/api/v1/keys/", total=10 * 1024, declare_length=False)
    assert client.status == 401  # read whole and answered by the view (no key)
    assert client.pulled == 10 * 1024


def test_web_pages_get_a_readable_413():
    client = _post("/login/", total=5 * 1024 * 1024, declare_length=True)
    assert client.status == 413
    assert b"Request too large" in client.body
