"""A loopback web for the web search source and the safe fetcher's SSRF tests.

- `FakeWeb`: a search API at /search answering Brave Search's JSON (`provider = "brave"`) or SearXNG's
  (`"searxng"`), HTML pages at the paths in `pages`, redirects at the paths in `redirects`.
- `resolve_names(monkeypatch, {"intranet.example": "10.1.2.3"})`: a stand-in for DNS (socket.getaddrinfo)
  so a public-looking name resolves to the given addresses; every other name resolves for real.
- `DripServer`: answers 200 with a body sent one byte at a time (each within the read timeout).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any, Self

import pytest

from tests.fakes.http import FakeHTTPServer, RecordedRequest, Reply

ARTICLE_HTML = """<html><head><title>{title}</title></head><body>
<nav><a href="/">Home</a> <a href="/about">About us</a> <a href="/shop">Shop</a></nav>
<article><h1>{title}</h1>
{paragraphs}
</article><footer>Cookie settings. Copyright 2026. Subscribe to our newsletter.</footer></body></html>"""


def article_html(title: str, *paragraphs: str) -> str:
    """A page with navigation and footer boilerplate around an article the extractor should keep."""
    return ARTICLE_HTML.format(title=title, paragraphs="\n".join(f"<p>{p}</p>" for p in paragraphs))


class FakeWeb(FakeHTTPServer):
    def __init__(self) -> None:
        super().__init__()
        self.provider = "brave"
        self.results: list[dict[str, Any]] = []  # {"title", "url", "description", "page_age"?}
        self.pages: dict[str, tuple[str, str | bytes]] = {}  # path -> (content type, body)
        self.redirects: dict[str, str] = {}  # path -> Location

    @property
    def search_url(self) -> str:
        return f"{self.url}/search"

    def page(self, path: str, html: str, content_type: str = "text/html; charset=utf-8") -> str:
        """Serve html at path; returns its URL."""
        self.pages[path] = (content_type, html)
        return f"{self.url}{path}"

    def paths(self) -> list[str]:
        return [r.path.split("?", 1)[0] for r in self.requests]

    def handle(self, request: RecordedRequest) -> Reply:
        path = request.path.split("?", 1)[0]
        if path == "/search":
            return Reply(200, self._search_body(), content_type="application/json")
        if path in self.redirects:
            return Reply(302, None, headers={"Location": self.redirects[path]})
        if path in self.pages:
            content_type, body = self.pages[path]
            return Reply(200, body, content_type=content_type)
        return Reply(404, "Not Found", content_type="text/plain")

    def _search_body(self) -> dict[str, Any]:
        if self.provider == "brave":
            return {"type": "search", "query": {"original": "q"}, "web": {"type": "search", "results": self.results}}
        rows = [
            {
                "url": r["url"],
                "title": r.get("title", ""),
                "content": r.get("description", ""),
                "publishedDate": r.get("page_age"),
                "engine": "duckduckgo",
            }
            for r in self.results
        ]
        return {"query": "q", "number_of_results": len(rows), "results": rows}


def resolve_names(monkeypatch: pytest.MonkeyPatch, names: Mapping[str, str | Sequence[str]]) -> None:
    """Make each name resolve to its address(es) (a stand-in for DNS answers we cannot get offline)."""
    real = socket.getaddrinfo

    def resolver(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host in names:
            wanted = names[host]
            addresses = [wanted] if isinstance(wanted, str) else list(wanted)
            return [
                (socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port))
                for a in addresses
            ]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolver)


class DripServer:
    """A raw HTTP server on 127.0.0.1 that declares `size` bytes of text/html and sends one every
    `interval` seconds, so no single read times out."""

    def __init__(self, *, size: int = 200, interval: float = 0.1) -> None:
        self.size, self.interval = size, interval
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(4)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="DripServer", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}"

    def _serve(self) -> None:
        self._sock.settimeout(0.2)
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._drip, args=(conn,), daemon=True).start()

    def _drip(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.recv(65536)
                conn.sendall(
                    f"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {self.size}\r\n\r\n".encode()
                )
                for _ in range(self.size):
                    if self._stop.is_set():
                        return
                    conn.sendall(b"x")
                    time.sleep(self.interval)
            except OSError:  # the client gave up
                return

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._sock.close()
