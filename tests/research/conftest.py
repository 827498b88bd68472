"""Research test helpers: funding, the World Graph row, and world-scope sources the `local` adapter finds.

Pipeline tests run with transaction=True: each step's on_commit work (the sources' ingest, eager in tests)
then runs as in production, right after the step's transaction commits.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from datetime import date

import pytest

from exograph.accounts.models import User
from exograph.core.scope import Scope
from exograph.documents.models import Document, DocumentStatus, SourceType
from exograph.documents.services import document_text_ingest
from exograph.graphs.models import GraphKind
from exograph.graphs.services import graph_default_for_user
from tests.factories import graph_stores_drop, world_graph_row_ensure
from tests.fakes.llm_chat import FakeOpenAIChatServer, openai_chat_settings

QUANTUM = [
    (
        "Surface codes for quantum error correction",
        "Surface codes protect logical qubits from noise. Quantum error correction with surface codes uses "
        "stabilizer measurements on a two-dimensional lattice of physical qubits. Alexei Kitaev proposed the "
        "toric code in 1997. The surface code threshold is about one percent per operation.",
        "https://papers.example.org/surface-codes",
    ),
    (
        "Logical qubits and fault tolerance",
        "Fault-tolerant quantum computing encodes logical qubits in many physical qubits. Quantum error "
        "correction detects errors without measuring the encoded information. Peter Shor discovered the first "
        "quantum error correcting code in 1995.",
        "https://articles.example.com/logical-qubits",
    ),
    (
        "Decoders for quantum error correction",
        "Minimum-weight perfect matching decoders correct errors in surface codes. Google Quantum AI "
        "demonstrated quantum error correction below threshold on the Willow processor. Neural decoders "
        "learn the noise of real quantum hardware.",
        "https://blog.example.net/decoders",
    ),
]


@pytest.fixture(autouse=True)
def _world_row_and_stores(request) -> Iterator[None]:  # type: ignore[no-untyped-def]
    """The World Graph row of migration 0002 (a transactional test's flush removes it); stores dropped after."""
    if "db" not in request.fixturenames and "transactional_db" not in request.fixturenames:
        marker = request.node.get_closest_marker("django_db")
        if marker is None:
            yield
            return
        request.getfixturevalue("transactional_db" if marker.kwargs.get("transaction") else "db")
    world_graph_row_ensure()
    yield
    graph_stores_drop()


@pytest.fixture
def world_source(fund) -> Callable[..., Document]:  # type: ignore[no-untyped-def]
    """Ingest a text into the contributor's world-scope graph (merged into the World Graph when processed)."""

    def add(
        contributor: User, *, title: str, text: str, url: str | None = None, published: date | None = None
    ) -> Document:
        fund(contributor, 50)
        graph = graph_default_for_user(actor=contributor, scope=Scope.WORLD, kind=GraphKind.DOCUMENT)
        document, _ = document_text_ingest(
            actor=contributor,
            graph=graph,
            title=title,
            text=text,
            idempotency_key=f"test-world-{uuid.uuid4().hex}",
            source_url=url,
            source_type=SourceType.ARTICLE,
            published=published,
        )
        document.refresh_from_db()
        assert document.status == DocumentStatus.PROCESSED, (document.status, document.failure_reason)
        return document

    return add


@pytest.fixture
def quantum_world(bob, world_source) -> list[Document]:  # type: ignore[no-untyped-def]
    """Three world-scope articles on quantum error correction, contributed by bob."""
    return [world_source(bob, title=title, text=text, url=url) for title, text, url in QUANTUM]


@pytest.fixture
def openai_research(settings) -> Iterator[FakeOpenAIChatServer]:  # type: ignore[no-untyped-def]
    """RESEARCH_PROVIDER=openai against a loopback Chat Completions fake (the production SDK path)."""
    with openai_chat_settings(settings, provider="RESEARCH_PROVIDER", retries=0) as server:
        yield server
