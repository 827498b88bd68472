"""Source web: a loopback Brave/SearXNG search API and HTML pages, read through the safe fetcher."""

from __future__ import annotations

from datetime import date
from urllib.parse import parse_qs, urlsplit

import pytest
from django.utils import timezone

from exograph.core.errors import ServiceUnavailable
from exograph.sources.base import RequestBudget, SearchOptions, SourceBudgetExhausted
from exograph.sources.fetch import FetchFailed, FetchRefused
from exograph.sources.filters import hit_allowed
from exograph.sources.webpages import WebSource
from tests.fakes.http import Reply
from tests.fakes.web import FakeWeb, article_html

NO_OPTIONS = SearchOptions()
CORVANE = article_html(
    "Corvane Systems",
    "Corvane Systems was founded in 2011 in Tallinn by Mari Tamm. The company builds sensor networks for "
    "harbours and employs 240 people across three offices in the Baltic region.",
    "Its main product line monitors water levels, ship traffic and crane loads in real time for port operators.",
)


def test_search_then_read_gives_the_pages_main_text_without_boilerplate(web: FakeWeb, budget) -> None:  # type: ignore[no-untyped-def]
    url = web.page("/corvane", CORVANE)
    web.results = [
        {"title": "Corvane Systems", "url": url + "#top", "description": "sensors", "page_age": "2024-05-01T10:00:00"}
    ]
    source = WebSource()
    [hit] = source.search("Corvane Systems harbour sensors", limit=3, budget=budget, options=NO_OPTIONS)
    assert (hit.adapter, hit.kind, hit.key, hit.title) == ("web", "article", url, "Corvane Systems")
    assert hit.published == date(2024, 5, 1) and hit.snippet == "sensors"
    text = source.read(hit, budget=budget)
    assert text.text.startswith("Corvane Systems\n\n") and "founded in 2011 in Tallinn" in text.text
    assert "Cookie settings" not in text.text and "About us" not in text.text
    assert web.requests[0].header("X-Subscription-Token") == "brave-test"
    assert parse_qs(urlsplit(web.requests[0].path).query)["q"] == ["Corvane Systems harbour sensors"]
    assert budget.remaining == 18


def test_searxng_results_and_dates_are_read(settings, web: FakeWeb, budget) -> None:  # type: ignore[no-untyped-def]
    settings.WEB_SEARCH_PROVIDER = "searxng"
    web.provider = "searxng"
    web.results = [
        {"title": "C", "url": web.page("/c", CORVANE), "description": "x", "page_age": "2023-02-03T00:00:00"}
    ]
    [hit] = WebSource().search("Corvane", limit=3, budget=budget, options=NO_OPTIONS)
    assert hit.published == date(2023, 2, 3) and hit.snippet == "x"
    assert "format=json" in web.requests[0].path


def test_date_range_asks_brave_for_it_and_drops_undated_or_outside_results(web: FakeWeb, budget) -> None:  # type: ignore[no-untyped-def]
    web.results = [
        {"title": "old", "url": "https://old.example/a", "description": "", "page_age": "2019-01-01T00:00:00"},
        {"title": "undated", "url": "https://undated.example/a", "description": ""},
        {"title": "inside", "url": "https://new.example/a", "description": "", "page_age": "2024-07-01T00:00:00"},
    ]
    options = SearchOptions(date_from=date(2024, 1, 1), date_to=date(2024, 12, 31))
    hits = WebSource().search("anything", limit=2, budget=budget, options=options)
    assert [h.title for h in hits] == ["inside"]
    query = parse_qs(urlsplit(web.requests[0].path).query)
    assert query["freshness"] == ["2024-01-01to2024-12-31"] and query["count"] == ["4"]


def test_excluded_domains_drop_their_subdomains_but_not_lookalikes(web: FakeWeb, budget) -> None:  # type: ignore[no-untyped-def]
    urls = [
        "https://example.com/a",
        "https://blog.Example.com./b",
        "https://example.com.evil.test/c",
        "https://notexample.com/d",
        "https://xn--bcher-kva.example/e",
        "https://bücher.example/f",
    ]
    web.results = [{"title": u, "url": u, "description": ""} for u in urls]
    options = SearchOptions(excluded_domains=("example.com", "xn--bcher-kva.example"))
    hits = WebSource().search("anything", limit=10, budget=budget, options=options)
    assert [h.url for h in hits] == ["https://example.com.evil.test/c", "https://notexample.com/d"]


def test_non_http_results_are_dropped(web: FakeWeb, budget) -> None:  # type: ignore[no-untyped-def]
    web.results = [
        {"title": "f", "url": "file:///etc/passwd"},
        {"title": "g", "url": "gopher://example.com/"},
        {"title": "ok", "url": "https://example.org/"},
    ]
    assert [h.title for h in WebSource().search("x", limit=5, budget=budget, options=NO_OPTIONS)] == ["ok"]


def test_a_redirect_to_an_excluded_domain_shows_in_the_read_hit(web: FakeWeb, budget) -> None:  # type: ignore[no-untyped-def]
    target = web.page("/landing", CORVANE).replace("127.0.0.1", "localhost")
    web.redirects["/go"] = target
    web.results = [{"title": "Corvane", "url": f"{web.url}/go", "description": ""}]
    options = SearchOptions(excluded_domains=("localhost",))
    [hit] = WebSource().search("Corvane", limit=1, budget=budget, options=options)
    text = WebSource().read(hit, budget=budget)
    assert text.hit.url == target and text.hit.key == hit.key
    assert hit_allowed(hit, options) and not hit_allowed(text.hit, options)


def test_pages_without_main_text_or_of_other_types_are_not_read(web: FakeWeb, budget) -> None:  # type: ignore[no-untyped-def]
    empty = web.page("/empty", "<html><body><script>var x = 1;</script><img src='a.png'></body></html>")
    pdf = web.page("/paper.pdf", "%PDF-1.7", content_type="application/pdf")
    web.results = [{"title": "e", "url": empty}]
    [hit] = WebSource().search("x", limit=1, budget=budget, options=NO_OPTIONS)
    with pytest.raises(FetchFailed) as caught:
        WebSource().read(hit, budget=budget)
    assert caught.value.code == "source_no_text"
    web.results = [{"title": "p", "url": pdf}]
    with pytest.raises(FetchRefused) as refused:
        WebSource().read(WebSource().search("x", limit=1, budget=budget, options=NO_OPTIONS)[0], budget=budget)
    assert refused.value.code == "fetch_content_type"


def test_page_text_is_capped_by_the_text_setting(settings, web: FakeWeb, budget) -> None:  # type: ignore[no-untyped-def]
    settings.RESEARCH_SOURCE_MAX_CHARS = 800
    paragraph = "Harbour sensors measure the water level every second and report it to the port. "
    web.results = [{"title": "Long", "url": web.page("/long", article_html("Long", *[paragraph] * 60))}]
    [hit] = WebSource().search("sensors", limit=1, budget=budget, options=NO_OPTIONS)
    assert len(WebSource().read(hit, budget=budget).text) <= 800


def test_budget_is_spent_per_search_and_per_page(web: FakeWeb) -> None:
    web.results = [{"title": "C", "url": web.page("/c", CORVANE)}]
    budget = RequestBudget(remaining=2)
    [hit] = WebSource().search("Corvane", limit=1, budget=budget, options=NO_OPTIONS)
    WebSource().read(hit, budget=budget)
    with pytest.raises(SourceBudgetExhausted):
        WebSource().read(hit, budget=budget)
    with pytest.raises(SourceBudgetExhausted):
        WebSource().search("Corvane", limit=1, budget=budget, options=NO_OPTIONS)
    assert web.paths() == ["/search", "/c"]


def test_a_malformed_search_reply_is_service_unavailable_naming_the_search_api(web: FakeWeb, budget) -> None:  # type: ignore[no-untyped-def]
    web.reply_next(Reply(200, "<html>captcha</html>", content_type="text/html"))
    with pytest.raises(ServiceUnavailable) as caught:
        WebSource().search("Corvane", limit=1, budget=budget, options=NO_OPTIONS)
    assert caught.value.code == "web_search_unavailable" and "web search API (brave)" in caught.value.message
    web.reply_next(Reply(500, {"error": "down"}))
    with pytest.raises(ServiceUnavailable):
        WebSource().search("Corvane", limit=1, budget=budget, options=NO_OPTIONS)


def test_an_open_ended_range_asks_brave_up_to_today(web: FakeWeb, budget) -> None:  # type: ignore[no-untyped-def]
    WebSource().search("anything", limit=2, budget=budget, options=SearchOptions(date_from=date(2024, 1, 1)))
    WebSource().search("anything", limit=2, budget=budget, options=SearchOptions(date_to=date(2020, 5, 1)))
    sent = [parse_qs(urlsplit(r.path).query)["freshness"][0] for r in web.requests]
    assert sent == [f"2024-01-01to{timezone.now().date().isoformat()}", "1970-01-01to2020-05-01"]
