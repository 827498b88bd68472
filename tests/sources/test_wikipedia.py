"""Source wikipedia against a loopback MediaWiki action API (list=search, prop=extracts)."""

from __future__ import annotations

from datetime import date

import pytest

from exograph.core.errors import ServiceUnavailable
from exograph.sources.base import RequestBudget, SearchOptions, SourceBudgetExhausted, SourceHit
from exograph.sources.fetch import FetchFailed
from exograph.sources.wikipedia import WikipediaSource, article_url
from tests.fakes.http import Reply
from tests.fakes.mediawiki import FakeMediaWiki, WikiPage

NO_OPTIONS = SearchOptions()


def test_search_returns_articles_with_page_ids_urls_plain_snippets_and_dates(  # type: ignore[no-untyped-def]
    wiki_api: FakeMediaWiki, budget
) -> None:
    hits = WikipediaSource().search("knowledge graph", limit=5, budget=budget, options=NO_OPTIONS)
    assert [h.key for h in hits] == ["736", "4502"]
    first = hits[0]
    assert (first.adapter, first.kind, first.title) == ("wikipedia", "article", "Knowledge graph")
    assert first.url == f"{wiki_api.url}/wiki/Knowledge_graph"
    assert first.published == date(2025, 11, 20)
    assert "<span" not in first.snippet and first.snippet.startswith("A knowledge graph is a knowledge base")
    params = wiki_api.params()[0]
    assert params["action"] == "query" and params["list"] == "search" and params["format"] == "json"
    assert params["formatversion"] == "2" and params["srnamespace"] == "0" and params["srlimit"] == "5"
    assert params["srsearch"] == "knowledge graph" and budget.remaining == 19


def test_read_is_the_plain_text_extract_without_reference_sections(wiki_api: FakeMediaWiki, budget) -> None:  # type: ignore[no-untyped-def]
    [hit, _] = WikipediaSource().search("knowledge graph", limit=5, budget=budget, options=NO_OPTIONS)
    text = WikipediaSource().read(hit, budget=budget)
    assert text.text.startswith("Knowledge graph\n\nA knowledge graph is a knowledge base")
    assert "popularised by Google in 2012" in text.text
    assert "Semantic network" not in text.text and "A citation" not in text.text
    assert text.hit.url == f"{wiki_api.url}/wiki/Knowledge_graph" and text.hit.key == "736"
    params = wiki_api.params()[1]
    assert params["prop"] == "extracts|info" and params["explaintext"] == "1" and params["pageids"] == "736"
    assert budget.remaining == 18


def test_article_urls_follow_the_wikis_layout(settings) -> None:  # type: ignore[no-untyped-def]
    settings.WIKIPEDIA_API_URL = "https://de.wikipedia.org/w/api.php"
    assert article_url("Straße von Hormus", 5) == "https://de.wikipedia.org/wiki/Stra%C3%9Fe_von_Hormus"
    settings.WIKIPEDIA_API_URL = "https://wiki.example.org/api.php"
    assert article_url("Anything", 42) == "https://wiki.example.org/index.php?curid=42"


def test_date_range_keeps_articles_last_edited_inside_it(wiki_api: FakeMediaWiki, budget) -> None:  # type: ignore[no-untyped-def]
    options = SearchOptions(date_from=date(2025, 1, 1))
    hits = WikipediaSource().search("graph", limit=1, budget=budget, options=options)
    assert [h.key for h in hits] == ["736"]
    assert wiki_api.params()[0]["srlimit"] == "2"  # asks for more when filtering
    options = SearchOptions(date_to=date(2020, 1, 1))
    assert [h.key for h in WikipediaSource().search("graph", limit=5, budget=budget, options=options)] == ["4502"]


def test_excluded_domains_cover_the_wikis_host(settings, wiki_api: FakeMediaWiki, budget) -> None:  # type: ignore[no-untyped-def]
    options = SearchOptions(excluded_domains=("127.0.0.1",))
    assert WikipediaSource().search("graph", limit=5, budget=budget, options=options) == []
    settings.WIKIPEDIA_API_URL = wiki_api.api_url.replace("127.0.0.1", "localhost")
    options = SearchOptions(excluded_domains=("localhost",))
    assert WikipediaSource().search("graph", limit=5, budget=budget, options=options) == []


def test_missing_pages_and_bad_keys_read_as_failed_fetches(wiki_api: FakeMediaWiki, budget) -> None:  # type: ignore[no-untyped-def]
    gone = SourceHit(adapter="wikipedia", kind="article", key="999", title="Gone", url="")
    with pytest.raises(FetchFailed) as caught:
        WikipediaSource().read(gone, budget=budget)
    assert caught.value.code == "source_missing"
    with pytest.raises(FetchFailed) as caught:
        WikipediaSource().read(SourceHit("wikipedia", "article", "1 OR 1", "x", ""), budget=budget)
    assert caught.value.code == "source_bad_key" and len(wiki_api.requests) == 1


def test_an_empty_extract_is_not_read_as_a_source(wiki_api: FakeMediaWiki, budget) -> None:  # type: ignore[no-untyped-def]
    wiki_api.pages.append(WikiPage(77, "Graph (disambiguation)", "  \n\n "))
    with pytest.raises(FetchFailed) as caught:
        WikipediaSource().read(SourceHit("wikipedia", "article", "77", "Graph", ""), budget=budget)
    assert caught.value.code == "source_no_text"


def test_long_articles_are_capped_by_the_text_setting(settings, wiki_api: FakeMediaWiki, budget) -> None:  # type: ignore[no-untyped-def]
    settings.RESEARCH_SOURCE_MAX_CHARS = 600
    wiki_api.pages.append(WikiPage(88, "Long", "word " * 2000))
    text = WikipediaSource().read(SourceHit("wikipedia", "article", "88", "Long", ""), budget=budget)
    assert 500 <= len(text.text) <= 600 and text.text.endswith("word")


def test_budget_exhausted_stops_before_the_read_request(wiki_api: FakeMediaWiki) -> None:
    budget = RequestBudget(remaining=1)
    [hit, _] = WikipediaSource().search("knowledge graph", limit=5, budget=budget, options=NO_OPTIONS)
    with pytest.raises(SourceBudgetExhausted):
        WikipediaSource().read(hit, budget=budget)
    assert len(wiki_api.requests) == 1


@pytest.mark.parametrize(
    ("reply", "detail"),
    [
        (Reply(200, "<!DOCTYPE html><html>Wikimedia Error</html>", content_type="text/html"), "not fetched"),
        (Reply(200, "{not json", content_type="application/json"), "not JSON"),
        (Reply(200, [1, 2], content_type="application/json"), "not a JSON object"),
        (Reply(200, {"batchcomplete": True}, content_type="application/json"), "no query result"),
        (Reply(200, {"query": {"search": "nope"}}, content_type="application/json"), "no search results"),
        (
            Reply(
                200,
                {"error": {"code": "maxlag", "info": "Waiting for db1: 6 seconds lagged."}},
                content_type="application/json",
            ),
            "maxlag",
        ),
        (Reply(429, {"error": "too many"}, content_type="application/json"), "answered 429"),
    ],
)
def test_malformed_or_failed_replies_are_service_unavailable_naming_wikipedia(  # type: ignore[no-untyped-def]
    wiki_api: FakeMediaWiki, budget, reply, detail
) -> None:
    wiki_api.reply_next(reply)
    with pytest.raises(ServiceUnavailable) as caught:
        WikipediaSource().search("graph", limit=5, budget=budget, options=NO_OPTIONS)
    assert caught.value.code == "source_unavailable" and caught.value.extra == {"source": "wikipedia"}
    assert "wikipedia" in caught.value.message and detail in caught.value.message


def test_a_failed_read_is_a_failed_fetch_naming_wikipedia(wiki_api: FakeMediaWiki, budget) -> None:  # type: ignore[no-untyped-def]
    wiki_api.reply_next(Reply(502, "Bad Gateway", content_type="text/plain"))
    with pytest.raises(FetchFailed) as caught:
        WikipediaSource().read(SourceHit("wikipedia", "article", "736", "Knowledge graph", ""), budget=budget)
    assert caught.value.code == "source_unavailable" and "wikipedia" in caught.value.message


def test_stopwords_are_dropped_and_an_empty_search_is_retried_broader(wiki_api: FakeMediaWiki, budget) -> None:  # type: ignore[no-untyped-def]
    empty = {"batchcomplete": True, "query": {"searchinfo": {"totalhits": 0}, "search": []}}
    wiki_api.reply_next(Reply(200, empty, content_type="application/json"))
    hits = WikipediaSource().search(
        "What is the history of knowledge graphs at Google?", limit=5, budget=budget, options=NO_OPTIONS
    )
    assert hits and hits[0].key == "736"
    assert [p["srsearch"] for p in wiki_api.params()] == ["history knowledge graphs google", "history knowledge graphs"]
    assert WikipediaSource().search("what is the", limit=5, budget=budget, options=NO_OPTIONS) == []
    assert len(wiki_api.requests) == 2
