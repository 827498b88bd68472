"""Engine web: a loopback search API and HTML pages; the safe fetcher refuses SSRF attempts."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from exograph.chat.models import ChatSession
from exograph.sources.fetch import FetchRefused, fetch
from exograph.sources.web import web_evidence
from tests.fakes.http import FakeHTTPServer, RecordedRequest, Reply

pytestmark = pytest.mark.django_db

ARTICLE = """<html><head><title>Corvane</title></head><body>
<nav><a href="/">Home</a> <a href="/about">About us</a> <a href="/shop">Shop</a></nav>
<article><h1>Corvane Systems</h1>
<p>Corvane Systems was founded in 2011 in Tallinn by Mari Tamm. The company builds sensor networks for
harbours and employs 240 people across three offices in the Baltic region.</p>
<p>Its main product line monitors water levels, ship traffic and crane loads in real time for port operators.</p>
</article><footer>Cookie settings. Copyright 2026. Subscribe to our newsletter.</footer></body></html>"""


class FakeWeb(FakeHTTPServer):
    """Brave-style search JSON at /search, pages at /page and /plain, a redirect to 10.0.0.1 at /hop."""

    def __init__(self) -> None:
        super().__init__()
        self.results: list[dict[str, str]] = []

    def handle(self, request: RecordedRequest) -> Reply:
        path = request.path.split("?", 1)[0]
        if path == "/search":
            return Reply(200, {"type": "search", "web": {"results": self.results}})
        if path == "/page":
            return Reply(200, ARTICLE, content_type="text/html; charset=utf-8")
        if path == "/image":
            return Reply(200, b"\x89PNG....", content_type="image/png")
        if path == "/big":
            return Reply(200, "<p>" + "word " * 5000 + "</p>", content_type="text/html")
        if path == "/hop":
            return Reply(302, None, headers={"Location": "http://10.0.0.1/latest/meta-data/"})
        return Reply(404, {"error": "nope"})


@pytest.fixture
def web(settings) -> Iterator[FakeWeb]:  # type: ignore[no-untyped-def]
    with FakeWeb() as server:
        settings.WEB_SEARCH_PROVIDER = "brave"
        settings.WEB_SEARCH_URL = f"{server.url}/search"
        settings.WEB_SEARCH_API_KEY = "brave-test"
        settings.WEB_FETCH_ALLOW_LOOPBACK = True
        settings.WEB_FETCH_TIMEOUT_SECONDS = 2.0
        yield server


def test_web_engine_answers_from_the_pages_main_text_citing_its_url(alice, alice_client, fund, web):  # type: ignore[no-untyped-def]
    fund(alice, 10)
    web.results = [{"title": "Corvane Systems", "url": f"{web.url}/page", "description": "sensors"}]
    response = alice_client.post(
        "/api/v1/chat/messages/",
        {"message": "When was Corvane Systems founded?", "reasoning_engine": "web"},
        format="json",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert "founded in 2011" in body["answer"] and body["grounded"] is True
    cited = body["evidence"][0]
    assert cited["origin"] == "web" and cited["url"] == f"{web.url}/page" and cited["source"] == "Corvane Systems"
    assert web.requests[0].header("X-Subscription-Token") == "brave-test"
    handed = ChatSession.objects.get(id=body["session_id"]).messages.last().evidence  # type: ignore[union-attr]
    assert all("Cookie settings" not in item["text"] and "About us" not in item["text"] for item in handed)


def test_searxng_json_results_are_used(settings, web) -> None:  # type: ignore[no-untyped-def]
    settings.WEB_SEARCH_PROVIDER = "searxng"

    class Searx(FakeWeb):
        def handle(self, request: RecordedRequest) -> Reply:
            if request.path.startswith("/search"):
                return Reply(200, {"results": [{"title": "C", "url": f"{web.url}/page", "content": "x"}]})
            return super().handle(request)

    with Searx() as searx:
        settings.WEB_SEARCH_URL = f"{searx.url}/search"
        items = web_evidence(question="Who founded Corvane Systems?")
    assert "format=json" in searx.requests[0].path
    assert items and "Mari Tamm" in items[0]["text"]


def test_loopback_result_is_refused_with_the_allowance_off(settings, web) -> None:  # type: ignore[no-untyped-def]
    web.results = [{"title": "local", "url": f"{web.url}/page", "description": ""}]
    settings.WEB_FETCH_ALLOW_LOOPBACK = False
    with pytest.raises(FetchRefused) as caught:
        fetch(f"{web.url}/page")
    assert caught.value.code == "fetch_private_address"
    settings.WEB_SEARCH_URL = f"{web.url}/search"  # the operator's search API itself may be local
    assert web_evidence(question="Corvane founded") == []
    assert not [r for r in web.requests if r.path == "/page"]


def test_cloud_metadata_address_is_refused_before_connecting() -> None:
    with pytest.raises(FetchRefused) as caught:
        fetch("http://169.254.169.254/latest/meta-data/")
    assert caught.value.code == "fetch_private_address"


def test_redirect_to_a_private_address_is_refused(web) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FetchRefused) as caught:
        fetch(f"{web.url}/hop")
    assert caught.value.code == "fetch_private_address"
    assert [r.path for r in web.requests] == ["/hop"]


def test_name_resolving_to_a_private_address_is_refused(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    real = socket.getaddrinfo

    def resolver(host, port, *args, **kwargs):  # type: ignore[no-untyped-def]  # a stand-in for DNS
        if host == "intranet.example":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.1.2.3", port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    with pytest.raises(FetchRefused) as caught:
        fetch("https://intranet.example/admin")
    assert caught.value.code == "fetch_private_address"


@pytest.mark.parametrize(
    ("url", "code"),
    [
        ("ftp://example.com/file", "fetch_scheme"),
        ("file:///etc/passwd", "fetch_scheme"),
        ("http://user:pw@example.com/", "fetch_credentials"),
    ],
)
def test_non_http_urls_and_credentials_are_refused(url, code) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FetchRefused) as caught:
        fetch(url)
    assert caught.value.code == code


def test_content_types_and_sizes_are_capped(settings, web) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FetchRefused) as caught:
        fetch(f"{web.url}/image")
    assert caught.value.code == "fetch_content_type"
    settings.WEB_FETCH_MAX_BYTES = 2048
    with pytest.raises(FetchRefused) as caught:
        fetch(f"{web.url}/big")  # the fake declares its Content-Length
    assert caught.value.code == "fetch_too_large"
