"""Source arxiv against a loopback arXiv API speaking Atom: search, read, filters, budget, bad replies."""

from __future__ import annotations

from datetime import date

import pytest

from exograph.core.errors import ServiceUnavailable
from exograph.sources.arxiv import ArxivSource, search_query
from exograph.sources.base import RequestBudget, SearchOptions, SourceBudgetExhausted
from exograph.sources.fetch import FetchFailed
from tests.fakes.arxiv import ATOM_TYPE, FakeArxiv, error_feed_xml
from tests.fakes.http import Reply

NO_OPTIONS = SearchOptions()


def test_search_returns_papers_with_ids_authors_dates_and_abstracts(arxiv_api: FakeArxiv, budget) -> None:  # type: ignore[no-untyped-def]
    hits = ArxivSource().search(
        "What does knowledge graph retrieval do for recall?", limit=5, budget=budget, options=NO_OPTIONS
    )
    assert [h.key for h in hits] == ["2403.01234"]
    hit = hits[0]
    assert (hit.adapter, hit.kind) == ("arxiv", "paper")
    assert hit.title == "Knowledge Graph Retrieval for Question Answering"
    assert hit.url == "https://arxiv.org/abs/2403.01234v1"
    assert hit.authors == ("Mari Tamm", "Jon Berg")
    assert hit.published == date(2024, 3, 2)
    assert "raises recall by 12 points" in hit.snippet
    query = arxiv_api.queries()[0]
    assert query["search_query"] == ["all:knowledge AND all:graph AND all:retrieval AND all:recall"]
    assert query["max_results"] == ["5"] and query["start"] == ["0"]
    assert arxiv_api.requests[0].header("Accept") == "application/atom+xml, application/xml, text/xml"
    assert budget.remaining == 19


def test_read_is_the_abstract_with_title_and_authors_without_a_request(arxiv_api: FakeArxiv) -> None:
    budget = RequestBudget(remaining=1)
    source = ArxivSource()
    [hit] = source.search("knowledge graph retrieval", limit=3, budget=budget, options=NO_OPTIONS)
    text = source.read(hit, budget=budget)
    assert text.text.startswith("Knowledge Graph Retrieval for Question Answering\n")
    assert "Authors: Mari Tamm, Jon Berg" in text.text and "arXiv: 2403.01234" in text.text
    assert "HotpotQA" in text.text
    assert len(arxiv_api.requests) == 1 and budget.remaining == 0


def test_a_hit_known_only_by_its_key_is_read_through_id_list(arxiv_api: FakeArxiv, budget) -> None:  # type: ignore[no-untyped-def]
    [hit] = ArxivSource().search("sparse graph retrieval", limit=3, budget=budget, options=NO_OPTIONS)
    bare = type(hit)(adapter="arxiv", kind="paper", key=hit.key, title="?", url="")
    text = ArxivSource().read(bare, budget=budget)
    assert arxiv_api.queries()[-1]["id_list"] == ["2106.09876"]
    assert text.hit.title == "Sparse Graph Retrieval at Scale" and "40 milliseconds" in text.text
    assert text.hit.url == "https://arxiv.org/abs/2106.09876v1" and budget.remaining == 18


def test_an_unknown_id_reads_as_a_failed_fetch(arxiv_api: FakeArxiv, budget) -> None:  # type: ignore[no-untyped-def]
    bare = ArxivSource().search("graph retrieval agents", limit=1, budget=budget, options=NO_OPTIONS)[0]
    with pytest.raises(FetchFailed) as caught:
        ArxivSource().read(type(bare)(adapter="arxiv", kind="paper", key="2901.99999", title="", url=""), budget=budget)
    assert caught.value.code == "source_no_text"
    with pytest.raises(FetchFailed) as caught:  # arXiv answers an id it cannot parse with a 400 error feed
        ArxivSource().read(
            type(bare)(adapter="arxiv", kind="paper", key="abc.def/1234567", title="", url=""), budget=budget
        )
    assert caught.value.code == "source_unavailable" and "arxiv" in caught.value.message
    sent = len(arxiv_api.requests)
    for key in ("2403.01234,2106.09876", "x OR y", ""):  # never more than the one id reaches id_list
        with pytest.raises(FetchFailed) as caught:
            ArxivSource().read(type(bare)(adapter="arxiv", kind="paper", key=key, title="", url=""), budget=budget)
        assert caught.value.code == "source_bad_key"
    assert len(arxiv_api.requests) == sent


def test_date_range_goes_into_the_query_and_is_enforced_on_the_reply(arxiv_api: FakeArxiv, budget) -> None:  # type: ignore[no-untyped-def]
    options = SearchOptions(date_from=date(2022, 1, 1), date_to=date(2024, 12, 31))
    hits = ArxivSource().search("graph retrieval", limit=10, budget=budget, options=options)
    assert [h.key for h in hits] == ["2403.01234"]
    assert "AND submittedDate:[202201010000 TO 202412312359]" in arxiv_api.queries()[0]["search_query"][0]
    arxiv_api.filtering = False  # a reply that ignores the range is still filtered
    hits = ArxivSource().search("graph retrieval", limit=10, budget=budget, options=options)
    assert [h.key for h in hits] == ["2403.01234"]
    only_from = SearchOptions(date_from=date(2025, 1, 1))
    assert [h.key for h in ArxivSource().search("graph", limit=10, budget=budget, options=only_from)] == ["2501.00042"]


def test_excluding_arxiv_org_excludes_every_paper(arxiv_api: FakeArxiv, budget) -> None:  # type: ignore[no-untyped-def]
    options = SearchOptions(excluded_domains=("arxiv.org",))
    assert ArxivSource().search("graph retrieval", limit=10, budget=budget, options=options) == []


def test_query_syntax_cannot_be_injected() -> None:
    expression = search_query('graph") OR ti:x AND (au:"smith" submittedDate:[* TO *]', NO_OPTIONS)
    assert expression == "all:graph AND all:ti AND all:x AND all:au AND all:smith AND all:submitteddate"
    assert search_query("the of and ?!", NO_OPTIONS) == ""


def test_a_query_of_stopwords_makes_no_request(arxiv_api: FakeArxiv, budget) -> None:  # type: ignore[no-untyped-def]
    assert ArxivSource().search("what is the", limit=5, budget=budget, options=NO_OPTIONS) == []
    assert arxiv_api.requests == [] and budget.remaining == 20


def test_limit_is_capped_by_the_setting(settings, arxiv_api: FakeArxiv, budget) -> None:  # type: ignore[no-untyped-def]
    settings.RESEARCH_SOURCE_MAX_RESULTS = 2
    hits = ArxivSource().search("graph retrieval", limit=50, budget=budget, options=NO_OPTIONS)
    assert len(hits) == 2 and arxiv_api.queries()[0]["max_results"] == ["2"]


def test_budget_exhausted_stops_before_any_request(arxiv_api: FakeArxiv) -> None:
    budget = RequestBudget(remaining=1)
    ArxivSource().search("graph retrieval", limit=2, budget=budget, options=NO_OPTIONS)
    with pytest.raises(SourceBudgetExhausted) as caught:
        ArxivSource().search("graph agents", limit=2, budget=budget, options=NO_OPTIONS)
    assert caught.value.status == 429 and len(arxiv_api.requests) == 1


@pytest.mark.parametrize(
    ("status", "body", "content_type"),
    [
        (200, "<html><body>Service temporarily unavailable</body></html>", "text/html"),
        (200, "<?xml version='1.0'?><feed xmlns='http://www.w3.org/2005/Atom'><entry>", ATOM_TYPE),
        (200, "<?xml version='1.0'?><rss version='2.0'><channel/></rss>", "application/xml"),
        (200, error_feed_xml("search_query is malformed"), ATOM_TYPE),
        (503, "Service Unavailable", "text/plain"),
        (200, '{"feed": []}', "application/json"),
    ],
)
def test_malformed_or_failed_replies_are_service_unavailable_naming_arxiv(  # type: ignore[no-untyped-def]
    arxiv_api: FakeArxiv, budget, status, body, content_type
) -> None:
    arxiv_api.reply_next(Reply(status, body, content_type=content_type))
    with pytest.raises(ServiceUnavailable) as caught:
        ArxivSource().search("graph retrieval", limit=2, budget=budget, options=NO_OPTIONS)
    assert caught.value.status == 503 and caught.value.code == "source_unavailable"
    assert "arxiv" in caught.value.message and caught.value.extra == {"source": "arxiv"}
    assert "ARXIV_API_URL" in caught.value.hint or "RESEARCH_SOURCE" in caught.value.hint


BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE feed [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>
<feed xmlns="http://www.w3.org/2005/Atom"><entry><id>http://arxiv.org/abs/2401.00001v1</id>
<title>&d;</title><summary>x</summary></entry></feed>"""

EXTERNAL_ENTITY = """<?xml version="1.0"?>
<!DOCTYPE feed [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<feed xmlns="http://www.w3.org/2005/Atom"><entry><id>http://arxiv.org/abs/2401.00001v1</id>
<title>t</title><summary>&secret;</summary></entry></feed>"""


@pytest.mark.parametrize("body", [BILLION_LAUGHS, EXTERNAL_ENTITY])
def test_entity_expansion_and_external_entities_are_refused(arxiv_api: FakeArxiv, budget, body) -> None:  # type: ignore[no-untyped-def]
    arxiv_api.reply_next(Reply(200, body, content_type=ATOM_TYPE))
    with pytest.raises(ServiceUnavailable) as caught:
        ArxivSource().search("graph retrieval", limit=2, budget=budget, options=NO_OPTIONS)
    assert "not a readable Atom feed" in caught.value.message


def test_a_slow_api_times_out_as_unavailable(settings, arxiv_api: FakeArxiv, budget) -> None:  # type: ignore[no-untyped-def]
    settings.RESEARCH_SOURCE_TIMEOUT_SECONDS = 0.3
    arxiv_api.fail_next(200, delay=2)
    with pytest.raises(ServiceUnavailable) as caught:
        ArxivSource().search("graph retrieval", limit=2, budget=budget, options=NO_OPTIONS)
    assert "did not answer in time" in caught.value.message and budget.remaining == 19


def test_a_reply_over_the_size_cap_is_refused(settings, arxiv_api: FakeArxiv, budget) -> None:  # type: ignore[no-untyped-def]
    settings.RESEARCH_SOURCE_MAX_BYTES = 1024
    with pytest.raises(ServiceUnavailable) as caught:
        ArxivSource().search("graph retrieval", limit=3, budget=budget, options=NO_OPTIONS)
    assert "larger than 1024 bytes" in caught.value.message


def test_requests_are_spaced_by_the_minimum_interval(settings, arxiv_api: FakeArxiv, budget) -> None:  # type: ignore[no-untyped-def]
    settings.ARXIV_MIN_INTERVAL_SECONDS = 0.6
    for query in ("graph retrieval", "graph agents", "sparse graph"):
        ArxivSource().search(query, limit=1, budget=budget, options=NO_OPTIONS)
    gaps = [b - a for a, b in zip(arxiv_api.times, arxiv_api.times[1:], strict=False)]
    # arrival times, so leave room for a loaded machine's jitter; without the spacing the gaps are ~10 ms
    assert len(gaps) == 2 and min(gaps) >= 0.4


def test_abstracts_are_capped_by_the_text_setting(settings, arxiv_api: FakeArxiv, budget) -> None:  # type: ignore[no-untyped-def]
    settings.RESEARCH_SOURCE_MAX_CHARS = 500
    arxiv_api.papers[0] = type(arxiv_api.papers[0])(
        "2403.01234", "Knowledge Graph Retrieval", "graph retrieval " * 200, published="2024-03-02T00:00:00Z"
    )
    [hit] = ArxivSource().search("knowledge graph retrieval", limit=1, budget=budget, options=NO_OPTIONS)
    assert len(hit.snippet) <= 500 and len(ArxivSource().read(hit, budget=budget).text) <= 500


def test_when_all_words_find_nothing_the_three_longest_are_tried_once(arxiv_api: FakeArxiv, budget) -> None:  # type: ignore[no-untyped-def]
    hits = ArxivSource().search("sparse retrieval over billions zq", limit=3, budget=budget, options=NO_OPTIONS)
    assert [h.key for h in hits] == ["2106.09876"]
    sent = [q["search_query"][0] for q in arxiv_api.queries()]
    assert sent == [
        "all:sparse AND all:retrieval AND all:over AND all:billions AND all:zq",
        "all:sparse AND all:retrieval AND all:billions",
    ]
    assert budget.remaining == 18
    assert ArxivSource().search("quantum gravity foam", limit=3, budget=budget, options=NO_OPTIONS) == []
    assert len(arxiv_api.requests) == 3  # three words or fewer: nothing broader to try


def test_the_broader_retry_is_skipped_when_the_budget_is_spent(arxiv_api: FakeArxiv) -> None:
    budget = RequestBudget(remaining=1)
    assert ArxivSource().search("sparse retrieval over billions zq", limit=3, budget=budget, options=NO_OPTIONS) == []
    assert len(arxiv_api.requests) == 1 and budget.remaining == 0
