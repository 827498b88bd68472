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
    monkeypatch.setattr(graph_mode, "SEED_NAME_BOOST", 1.0)  # the counts alone, not how the question writes a name
    counted_by_text = lead()
    monkeypatch.setattr(graph_mode, "SEED_TEXT_FREQUENCY", 0)
    by_extraction_alone = lead()
    assert by_extraction_alone < 1.5
    assert counted_by_text > 4.0


@pytest.mark.django_db
def test_a_qualified_name_is_as_common_as_the_bare_name_passages_write(  # type: ignore[no-untyped-def]
    alice, write_doc, monkeypatch
) -> None:
    """A disambiguated name ("Lantern (album)") is written in text by its bare name ("lantern"), which eight
    passages write. Counted by the qualified phrase, which only the album's own passage carries, it seeds as if it
    were as rare as the question's other name, a chapel one passage names; counted by its bare name it seeds as
    the common word it is, and the chapel's passage leads."""
    from exograph.graphs.retrieval import graph_mode
    from exograph.graphs.retrieval.types import GraphRead

    graph = graph_create(actor=alice, name="Bare names", scope=Scope.PRIVATE)
    chapel = write_doc(
        graph,
        alice,
        texts=["Saint Odrun Chapel hosted the first concerts of a local folk trio in the winter of 1974."],
        entities=[("Saint Odrun Chapel", "location", "")],
    )
    album = write_doc(
        graph,
        alice,
        texts=["Lantern (album) is the second record of a folk trio, released on a small label."],
        entities=[("Lantern (album)", "work", "")],
    )
    for n in range(7):
        write_doc(
            graph,
            alice,
            texts=[f"Shop number {n} sold a paper lantern to every visitor of the harvest market."],
            entities=[],
        )
    question = "Did the trio that played in Saint Odrun Chapel record Lantern (album)?"

    def lead() -> float:
        read = GraphRead(graph=graph)
        graph_mode.graph_rank(read=read, question=question, dense=[])
        return read.passages[f"{chapel}:0"] / read.passages[f"{album}:0"]

    assert graph_mode.SEED_TEXT_BARE == 1  # on by default
    monkeypatch.setattr(graph_mode, "SEED_NAME_BOOST", 1.0)  # the counts alone, not how the question writes a name
    by_bare_name = lead()
    monkeypatch.setattr(graph_mode, "SEED_TEXT_BARE", 0)
    by_qualified_phrase = lead()
    assert by_qualified_phrase < 1.5
    assert by_bare_name > 3.0
