"""Graph mode weighs a linked name by how many passages write it, not only by how many extraction tied it to: a
common word that extraction happened to make a name once is not the question's rarest thing (issue 25 §4)."""

from __future__ import annotations

import pytest

from exograph.core.scope import Scope
from exograph.graphs import store
from exograph.graphs.services import graph_create


@pytest.mark.django_db
def test_phrase_counts_are_the_passages_whose_text_writes_the_words_together(  # type: ignore[no-untyped-def]
    alice, write_doc
) -> None:
    graph = graph_create(actor=alice, name="Phrase counts", scope=Scope.PRIVATE)
    write_doc(graph, alice, texts=["The harbour master logged a storm over the northern harbour."], entities=[])
    write_doc(graph, alice, texts=["A master of the harbour is named by the port council."], entities=[])
    write_doc(graph, alice, texts=["Gulls nest on the harbour wall every spring."], entities=[])
    counts = store.store_chunk_phrase_counts(
        graph.store_name, ["harbour", "harbour master", "lighthouse", "?!"], cap=100
    )
    assert counts["harbour"] == 3
    assert counts["harbour master"] == 1  # the words side by side, in that order
    assert counts["lighthouse"] == 0
    assert "?!" not in counts  # no word to look for
    assert store.store_chunk_phrase_counts(graph.store_name, ["harbour"], cap=2) == {"harbour": 2}
    assert store.store_chunk_phrase_counts(graph.store_name, [], cap=10) == {}


@pytest.mark.django_db
def test_a_common_word_made_a_name_once_does_not_seed_like_the_rare_subject(  # type: ignore[no-untyped-def]
    alice, write_doc, monkeypatch
) -> None:
    """The question names a rare abbey and says "county", a word eight passages write; extraction made "County" a
    name in one passage only (a headline). Counted by extraction alone, both names look equally rare and the
    headline's passage takes as much of the walk as the abbey's; counted by the text too, the abbey leads."""
    from exograph.graphs.retrieval import graph_mode
    from exograph.graphs.retrieval.types import GraphRead

    graph = graph_create(actor=alice, name="Seed frequency", scope=Scope.PRIVATE)
    abbey = write_doc(
        graph,
        alice,
        texts=["Marrowdene Abbey copied herbals by hand in its scriptorium for three centuries."],
        entities=[("Marrowdene Abbey", "organization", "")],
    )
    headline = write_doc(
        graph,
        alice,
        texts=["County fair opens with a pumpkin contest and a brass band on Saturday."],
        entities=[("County", "location", "")],
    )
    for n in range(7):
        write_doc(
            graph,
            alice,
            texts=[f"Road number {n} of the county was resurfaced after the floods of the winter."],
            entities=[],
        )
    question = "Which herbals were copied in the county by Marrowdene Abbey?"

    def lead() -> float:
        read = GraphRead(graph=graph)
        graph_mode.graph_rank(read=read, question=question, dense=[])
        return read.passages[f"{abbey}:0"] / read.passages[f"{headline}:0"]

    assert graph_mode.SEED_TEXT_FREQUENCY == 1  # on by default
    counted_by_text = lead()
    monkeypatch.setattr(graph_mode, "SEED_TEXT_FREQUENCY", 0)
    by_extraction_alone = lead()
    assert by_extraction_alone < 1.5
    assert counted_by_text > 4.0
