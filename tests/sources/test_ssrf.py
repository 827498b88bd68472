"""SSRF through the research sources: every page a search result points at, every redirect and every API
endpoint goes through the safe fetcher, which refuses loopback (unless allowed for tests), private,
link-local and reserved addresses after DNS, before connecting."""

from __future__ import annotations

import pytest

from exograph.core.errors import ServiceUnavailable
from exograph.sources.arxiv import ArxivSource
from exograph.sources.base import SearchOptions, SourceHit
from exograph.sources.fetch import FetchFailed, FetchRefused
from exograph.sources.webpages import WebSource
from exograph.sources.wikipedia import WikipediaSource
from tests.fakes.arxiv import FakeArxiv
from tests.fakes.mediawiki import FakeMediaWiki
from tests.fakes.web import DripServer, FakeWeb, article_html, resolve_names

NO_OPTIONS = SearchOptions()
PAGE = article_html("Internal", "The internal admin page lists every customer and their invoices for 2026.")


def read_result(web: FakeWeb, url: str, budget) -> None:  # type: ignore[no-untyped-def]
    """Search (the fake answers one result, url) and read it."""
    web.results = [{"title": "result", "url": url, "description": ""}]
    [hit] = WebSource().search("admin", limit=1, budget=budget, options=NO_OPTIONS)
    WebSource().read(hit, budget=budget)


def test_a_result_on_127_0_0_1_is_refused_with_the_loopback_allowance_off(settings, web: FakeWeb, budget) -> None:  # type: ignore[no-untyped-def]
    url = web.page("/admin", PAGE)
    settings.WEB_FETCH_ALLOW_LOOPBACK = False
    with pytest.raises(FetchRefused) as caught:
        read_result(web, url, budget)  # the operator's own search API may be local; its results may not
    assert caught.value.code == "fetch_private_address" and caught.value.status == 400
    assert web.paths() == ["/search"]


@pytest.mark.parametrize(
    "host",
    [
        "localhost",
        "127.1",
        "2130706433",
        "0x7f000001",
        "127.0.0.2",
        "0.0.0.0",  # noqa: S104 - a URL host under test, not a bind
        "[::ffff:127.0.0.1]",
        "[::1]",
        "[::]",
    ],
)
def test_other_spellings_of_loopback_are_refused_too(settings, web: FakeWeb, budget, host: str) -> None:  # type: ignore[no-untyped-def]
    web.page("/admin", PAGE)
    settings.WEB_FETCH_ALLOW_LOOPBACK = False
    with pytest.raises(FetchRefused) as caught:
        read_result(web, f"http://{host}:{web.port}/admin", budget)
    assert caught.value.code == "fetch_private_address"
    assert web.paths() == ["/search"]


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
        "http://[::ffff:169.254.169.254]/latest/meta-data/",
        "http://[fd00:ec2::254]/latest/meta-data/",
        "http://100.100.100.200/latest/meta-data/",
    ],
)
def test_cloud_metadata_addresses_are_refused_before_connecting(web: FakeWeb, budget, url: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FetchRefused) as caught:  # the loopback allowance (on here) does not cover them
        read_result(web, url, budget)
    assert caught.value.code == "fetch_private_address"


@pytest.mark.parametrize(
    "location",
    [
        "http://10.0.0.1/latest/meta-data/",
        "http://10.0.0.1:8080/",
        "http://[::ffff:10.0.0.1]/",
        "//10.0.0.1/admin",
        "http://192.168.0.1/",
        "http://169.254.169.254/",
    ],
)
def test_a_redirect_to_a_private_address_is_refused(web: FakeWeb, budget, location: str) -> None:  # type: ignore[no-untyped-def]
    web.redirects["/hop"] = location
    with pytest.raises(FetchRefused) as caught:
        read_result(web, f"{web.url}/hop", budget)
    assert caught.value.code == "fetch_private_address"
    assert web.paths() == ["/search", "/hop"]


def test_a_redirect_chain_is_checked_at_every_hop(web: FakeWeb, budget) -> None:  # type: ignore[no-untyped-def]
    web.redirects["/one"] = f"{web.url}/two"
    web.redirects["/two"] = "file:///etc/passwd"
    with pytest.raises(FetchRefused) as caught:
        read_result(web, f"{web.url}/one", budget)
    assert caught.value.code == "fetch_scheme" and web.paths() == ["/search", "/one", "/two"]


def test_a_redirect_loop_stops_at_the_cap(settings, web: FakeWeb, budget) -> None:  # type: ignore[no-untyped-def]
    settings.WEB_FETCH_MAX_REDIRECTS = 3
    web.redirects["/loop"] = "/loop"
    with pytest.raises(FetchRefused) as caught:
        read_result(web, f"{web.url}/loop", budget)
    assert caught.value.code == "fetch_too_many_redirects" and web.paths().count("/loop") == 4


@pytest.mark.parametrize(
    ("name", "addresses"),
    [
        ("intranet.example", "10.1.2.3"),
        ("printer.example", "192.168.1.20"),
        ("metadata.example", "169.254.169.254"),
        ("mixed.example", ["93.184.215.14", "172.16.5.4"]),  # one private answer is enough to refuse
        ("v6.example", "fd12:3456:789a::1"),
        ("cgnat.example", "100.64.0.7"),
    ],
)
def test_a_name_resolving_to_a_private_address_is_refused(  # type: ignore[no-untyped-def]
    monkeypatch, web: FakeWeb, budget, name: str, addresses: str | list[str]
) -> None:
    resolve_names(monkeypatch, {name: addresses})
    with pytest.raises(FetchRefused) as caught:
        read_result(web, f"https://{name}/admin", budget)
    assert caught.value.code == "fetch_private_address"


def test_a_redirect_to_a_name_resolving_to_a_private_address_is_refused(monkeypatch, web: FakeWeb, budget) -> None:  # type: ignore[no-untyped-def]
    resolve_names(monkeypatch, {"rebind.example": "10.9.9.9"})
    web.redirects["/hop"] = "http://rebind.example/admin"
    with pytest.raises(FetchRefused) as caught:
        read_result(web, f"{web.url}/hop", budget)
    assert caught.value.code == "fetch_private_address"


def test_api_endpoints_are_held_to_the_same_rules(settings, budget) -> None:  # type: ignore[no-untyped-def]
    settings.WEB_FETCH_ALLOW_LOOPBACK = False
    with FakeArxiv() as arxiv, FakeMediaWiki() as wiki:
        settings.ARXIV_API_URL, settings.WIKIPEDIA_API_URL = arxiv.api_url, wiki.api_url
        with pytest.raises(ServiceUnavailable) as caught:
            ArxivSource().search("graph retrieval", limit=2, budget=budget, options=NO_OPTIONS)
        assert "non-public address" in caught.value.message and caught.value.extra == {"source": "arxiv"}
        with pytest.raises(ServiceUnavailable) as caught:
            WikipediaSource().search("graph", limit=2, budget=budget, options=NO_OPTIONS)
        assert "non-public address" in caught.value.message and caught.value.extra == {"source": "wikipedia"}
        assert arxiv.requests == [] and wiki.requests == []


def test_a_hit_forged_with_a_private_url_is_refused_on_read(budget) -> None:  # type: ignore[no-untyped-def]
    forged = SourceHit(adapter="web", kind="article", key="k", title="t", url="http://10.0.0.1/")
    with pytest.raises(FetchRefused):
        WebSource().read(forged, budget=budget)


def test_a_page_dripping_bytes_is_cut_off_at_the_fetch_deadline(settings, budget) -> None:  # type: ignore[no-untyped-def]
    settings.RESEARCH_SOURCE_TIMEOUT_SECONDS = 0.5  # each byte arrives well within it
    settings.WEB_FETCH_DEADLINE_SECONDS = 0.5
    with DripServer(size=100, interval=0.1) as drip:
        hit = SourceHit(adapter="web", kind="article", key="d", title="drip", url=f"{drip.url}/")
        with pytest.raises(FetchFailed) as caught:
            WebSource().read(hit, budget=budget)
    assert caught.value.code == "fetch_timeout"
