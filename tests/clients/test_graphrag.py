"""exograph_client.graphrag with the real neo4j-graphrag package: GraphRAG(retriever=..., llm=FakeLLM) unchanged,
over the live service (ExoGraphRetriever) and over the FalkorDB graph the service wrote (the FalkorDB retrievers,
the official falkordb client on the project's embedded FalkorDB). The fake LLM records the prompt it is given, so
each test reads the context GraphRAG built from the retriever's items."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from exograph_client import Client
from exograph_client.graphrag import (
    ExoGraphRetriever,
    FalkorDBGraphRetriever,
    FalkorDBHybridRetriever,
    FalkorDBVectorRetriever,
    fulltext_query,
)
from neo4j_graphrag.embeddings.base import Embedder
from neo4j_graphrag.generation import GraphRAG
from neo4j_graphrag.llm import LLMInterfaceV2, LLMResponse
from neo4j_graphrag.retrievers.base import Retriever
from neo4j_graphrag.types import LLMMessage

from exograph.core.falkor import falkordb_client
from exograph.core.scope import Scope
from exograph.graphs import store
from exograph.graphs.embeddings import get_embedder
from exograph.graphs.models import Graph
from exograph.graphs.services import graph_create
from tests.graphs.conftest import QUANTUM_ENTITIES, QUANTUM_RELATIONS, QUANTUM_TEXTS

pytestmark = pytest.mark.django_db(transaction=True)

QUANTUM = "Quantum error correction protects qubits from noise and decoherence."
COOKING = (
    "Sourdough bread rises because wild yeast ferments the dough. "
    "A baker feeds the starter with flour and water every day."
)


class FakeLLM(LLMInterfaceV2):
    """An LLM (neo4j-graphrag's LLMInterfaceV2, the messages interface) that answers with a fixed text and keeps
    the user message of every call: the prompt GraphRAG formatted with the retriever's context."""

    def __init__(self) -> None:
        super().__init__(model_name="fake")
        self.prompts: list[str] = []

    def invoke(self, input: list[LLMMessage], *, response_format: Any = None, **kwargs: Any) -> LLMResponse:  # noqa: A002
        self.prompts.append("\n".join(m["content"] for m in input if m["role"] == "user"))
        return LLMResponse(content="fake answer")

    async def ainvoke(self, input: list[LLMMessage], *, response_format: Any = None, **kwargs: Any) -> LLMResponse:  # noqa: A002
        return self.invoke(input, response_format=response_format, **kwargs)


class ExoEmbedder(Embedder):
    """neo4j-graphrag's Embedder over the model ExoGraph wrote the graph's vectors with."""

    def embed_query(self, text: str) -> list[float]:
        return get_embedder().embed_one(text)


@pytest.fixture
def written(live_url: str, alice, alice_key: str, fund) -> Iterator[dict[str, Any]]:  # type: ignore[no-untyped-def]
    """Two documents in one private graph, processed by the service."""
    fund(alice, 200)
    with Client(live_url, api_key=alice_key) as exo:
        graph = exo.graphs.create("GraphRAG notes")
        ids = {}
        for title, text in (("Quantum notes", QUANTUM), ("Baking notes", COOKING)):
            uploaded = exo.documents.upload(text=text, title=title, graph_id=graph.id)
            exo.documents.wait_until_processed(uploaded.id, timeout=120)
            ids[title] = uploaded.id
        yield {"client": exo, "graph_id": graph.id, "documents": ids}


def _context(llm: FakeLLM) -> str:
    assert len(llm.prompts) == 1
    return llm.prompts[0]


def test_graphrag_over_the_hosted_service_puts_the_right_passages_in_the_context(written) -> None:  # type: ignore[no-untyped-def]
    exo, graph_id = written["client"], written["graph_id"]
    balance = exo.balance().balance
    for mode in ("rag", "graph"):
        llm = FakeLLM()
        retriever = ExoGraphRetriever(exo, mode=mode, graph_id=graph_id)
        assert isinstance(retriever, Retriever) and retriever.driver is None
        result = GraphRAG(retriever=retriever, llm=llm).search(
            "What protects qubits from noise?", return_context=True, retriever_config={"top_k": 5}
        )
        assert result.answer == "fake answer"
        items = result.retriever_result.items
        assert items and len(items) <= 5
        context = _context(llm)
        assert "error correction protects qubits" in context.lower()
        assert all(item.content in context for item in items)
        quantum = written["documents"]["Quantum notes"]
        cited = [item.metadata for item in items if item.metadata["document_id"] == quantum]
        assert cited, f"{mode}: no item of the quantum document"
        passage = next(m for m in cited if m["kind"] == "passage")
        assert passage["chunk_id"] and passage["page"] is None or isinstance(passage["page"], int)
        assert passage["document"] == "Quantum notes" and passage["origin"] == "private"
        assert passage["view_url"] and quantum in passage["view_url"]
        assert result.retriever_result.metadata["mode"] == mode
        assert result.retriever_result.metadata["__retriever"] == "ExoGraphRetriever"
    assert exo.balance().balance == balance  # retrieval is free: no chat message is bought to read evidence


def test_the_retriever_refuses_an_unknown_mode(written) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="mode"):
        ExoGraphRetriever(written["client"], mode="web")


def _store(graph_id: str) -> Any:
    return falkordb_client().select_graph(f"exo:{graph_id}")


@pytest.mark.parametrize("kind", [FalkorDBVectorRetriever, FalkorDBHybridRetriever])
def test_graphrag_over_falkordb_passages(written, kind) -> None:  # type: ignore[no-untyped-def]
    llm = FakeLLM()
    retriever = kind(_store(written["graph_id"]), ExoEmbedder())
    result = GraphRAG(retriever=retriever, llm=llm).search(
        "Why does sourdough bread rise?", return_context=True, retriever_config={"top_k": 1}
    )
    (item,) = result.retriever_result.items
    assert "wild yeast ferments the dough" in item.content and item.content in _context(llm)
    assert item.metadata["document_id"] == written["documents"]["Baking notes"]
    assert item.metadata["document"] == "Baking notes" and item.metadata["chunk_id"]
    if kind is FalkorDBHybridRetriever:  # words and meaning both found it
        assert item.metadata["found_by"] == ["vector", "fulltext"]


@pytest.fixture
def quantum_graph(alice, write_doc) -> Iterator[Graph]:  # type: ignore[no-untyped-def]
    """A graph written by ExoGraph's write path with known entities and typed relations (no extractor involved)."""
    graph = graph_create(actor=alice, name="Quantum", scope=Scope.PRIVATE)
    write_doc(graph, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES, relations=QUANTUM_RELATIONS)
    try:
        yield graph
    finally:
        store.store_drop(graph.store_name)


def test_graphrag_over_a_falkordb_graph_walk_gives_facts_with_their_passages(quantum_graph) -> None:  # type: ignore[no-untyped-def]
    llm = FakeLLM()
    retriever = FalkorDBGraphRetriever(_store(quantum_graph.id), ExoEmbedder())
    result = GraphRAG(retriever=retriever, llm=llm).search(
        "What does error correction protect?", return_context=True, retriever_config={"top_k": 2}
    )
    items = result.retriever_result.items
    assert items and len(items) <= 2 and all(item.metadata["kind"] == "fact" for item in items)
    context = _context(llm)
    assert all(item.content in context for item in items)
    best = items[0]
    assert (best.metadata["subject"], best.metadata["relation"], best.metadata["object"]) == (
        "Quantum error correction",
        "PROTECTS",
        "Qubit",
    )
    assert best.content == f"Quantum error correction protects Qubit: {QUANTUM_TEXTS[1]}"
    assert best.metadata["chunk_id"] in best.metadata["chunk_ids"] and best.metadata["page"] == 2
    assert best.metadata["document"] == "paper.pdf"


def test_the_fulltext_query_carries_no_operator() -> None:
    assert (
        fulltext_query("What is (quantum) -error | correction @name:x?") == "quantum|error|correction|name"
    )  # one-letter words dropped
    assert fulltext_query("the of") == "the|of"
    assert fulltext_query("?!") == ""
