"""A name the graph already holds keeps its vector: a later write reads it from the graph instead of embedding the
same text again (another worker, or this one after a restart, has nothing cached)."""

from __future__ import annotations

import pytest

from exograph.core.scope import Scope
from exograph.graphs.embeddings import get_embedder
from exograph.graphs.services import graph_create
from exograph.graphs.services import ingest as graph_ingest
from exograph.graphs.services.ingest import entity_text, entity_vectors_prepare

pytestmark = pytest.mark.django_db

HARBOUR = "A fishing town on the north coast, known for its lighthouse."


@pytest.fixture
def embedded(monkeypatch):  # type: ignore[no-untyped-def]
    """The texts the embedder is asked for from now on (it still embeds them)."""
    embedder = get_embedder()
    real = type(embedder).embed
    asked: list[str] = []

    def spy(self, texts):  # type: ignore[no-untyped-def]
        asked.extend(texts)
        return real(self, texts)

    monkeypatch.setattr(type(embedder), "embed", spy)
    return asked


@pytest.fixture
def harbours(alice, write_doc):  # type: ignore[no-untyped-def]
    """A graph where one document wrote Quillmoor (with a description); nothing cached in this process after."""
    graph = graph_create(actor=alice, name="harbours", scope=Scope.PRIVATE)
    write_doc(
        graph,
        alice,
        texts=["The ferry to Quillmoor leaves at dawn and returns with the tide."],
        entities=[("Quillmoor", "LOCATION", HARBOUR)],
    )
    graph_ingest._entity_vectors.clear()
    return graph


def test_a_second_document_naming_what_the_graph_holds_reuses_its_vector(alice, write_doc, harbours, embedded):  # type: ignore[no-untyped-def]
    write_doc(
        harbours,
        alice,
        texts=["Quillmoor's harbour froze in the winter of 1902; boats sailed from Tidewick instead."],
        entities=[("Quillmoor", "LOCATION", HARBOUR), ("Tidewick", "LOCATION", "")],
    )
    held = entity_text("Quillmoor", HARBOUR)
    assert held not in embedded  # read from the graph
    assert "Tidewick" in embedded  # new to the graph: embedded
    embedder = get_embedder()
    reused = graph_ingest._entity_vectors[(embedder.name, held)]
    expected = embedder.embed([held])[0]  # what embedding it again would have given
    assert list(reused) == pytest.approx([float(x) for x in expected], abs=1e-6)


def test_the_batch_prepare_step_reads_held_vectors_and_embeds_only_other_texts(harbours, embedded):  # type: ignore[no-untyped-def]
    # The same name with another description is another text (another vector): embedded.
    entity_vectors_prepare(graph=harbours, names=[("Quillmoor", HARBOUR), ("Quillmoor", ""), ("Tidewick", "")])
    assert sorted(embedded) == ["Quillmoor", "Tidewick"]
    embedder = get_embedder()
    assert (embedder.name, entity_text("Quillmoor", HARBOUR)) in graph_ingest._entity_vectors
