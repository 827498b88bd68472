"""Source adapter fixtures: loopback fakes of the arXiv, MediaWiki and web search APIs wired into settings."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from exograph.sources.base import RequestBudget
from tests.fakes.arxiv import FakeArxiv, Paper
from tests.fakes.mediawiki import FakeMediaWiki, WikiPage
from tests.fakes.web import FakeWeb

PAPERS = [
    Paper(
        "2403.01234",
        "Knowledge Graph Retrieval for Question Answering",
        "We combine knowledge graph retrieval with passage retrieval. On HotpotQA the graph walk raises recall "
        "by 12 points over dense retrieval alone.",
        authors=("Mari Tamm", "Jon Berg"),
        published="2024-03-02T17:59:59Z",
    ),
    Paper(
        "2106.09876",
        "Sparse Graph Retrieval at Scale",
        "A sparse index for graph retrieval over billions of edges, answering in 40 milliseconds.",
        authors=("Ada Lind",),
        published="2021-06-18T08:00:00Z",
    ),
    Paper(
        "2501.00042",
        "Graph Retrieval Agents",
        "Agents that plan graph retrieval steps and cite the relations they used.",
        authors=("Li Wei",),
        published="2025-01-03T12:00:00Z",
    ),
]

WIKI_PAGES = [
    WikiPage(
        736,
        "Knowledge graph",
        "A knowledge graph is a knowledge base that uses a graph-structured data model.\n\n"
        "History\nThe term was popularised by Google in 2012.\n\n"
        "See also\nSemantic network\nOntology\n\nReferences\n[1] A citation.",
        timestamp="2025-11-20T09:12:00Z",
    ),
    WikiPage(
        4502,
        "Graph database",
        "A graph database stores nodes and edges.\n\nExamples\nFalkorDB is a graph database built on Redis.",
        timestamp="2019-02-01T00:00:00Z",
    ),
]


@pytest.fixture(autouse=True)
def _sources_settings(settings) -> None:  # type: ignore[no-untyped-def]
    """No source configured unless a fixture sets it; loopback allowed (the fakes live there); short timeouts."""
    settings.ARXIV_API_URL = ""
    settings.WIKIPEDIA_API_URL = ""
    settings.WEB_SEARCH_URL = ""
    settings.WEB_SEARCH_PROVIDER = "brave"
    settings.WEB_SEARCH_API_KEY = "brave-test"
    settings.WEB_FETCH_ALLOW_LOOPBACK = True
    settings.WEB_FETCH_TIMEOUT_SECONDS = 2.0
    settings.RESEARCH_SOURCE_TIMEOUT_SECONDS = 2.0
    settings.ARXIV_MIN_INTERVAL_SECONDS = 0.0


@pytest.fixture
def arxiv_api(settings) -> Iterator[FakeArxiv]:  # type: ignore[no-untyped-def]
    with FakeArxiv(PAPERS) as server:
        settings.ARXIV_API_URL = server.api_url
        yield server


@pytest.fixture
def wiki_api(settings) -> Iterator[FakeMediaWiki]:  # type: ignore[no-untyped-def]
    with FakeMediaWiki(WIKI_PAGES) as server:
        settings.WIKIPEDIA_API_URL = server.api_url
        yield server


@pytest.fixture
def web(settings) -> Iterator[FakeWeb]:  # type: ignore[no-untyped-def]
    with FakeWeb() as server:
        settings.WEB_SEARCH_URL = server.search_url
        yield server


@pytest.fixture
def budget() -> RequestBudget:
    return RequestBudget(remaining=20)
