"""Graph mode also starts its walk from the passages the question's own words find by full text (BM25), not only
from the names it links and the dense hits: a passage that answers in the question's words but names none of its
names is otherwise reached only if some name leads there (issue 25 §4)."""

from __future__ import annotations

import pytest

from exograph.core.scope import Scope
from exograph.graphs.services import graph_create


def test_text_weights_are_a_softmax_of_the_score_as_a_share_of_the_best() -> None:
    from exograph.graphs.retrieval import graph_mode

    weights = graph_mode.text_weights([("first", 12.0), ("close", 11.4), ("far", 3.0), ("nothing", 0.0)])
    assert weights["first"] == pytest.approx(1.0)
    assert 0.5 < weights["close"] < 1.0  # 95 % of the best score
    assert weights["far"] < 0.001  # a quarter of it
    assert "nothing" not in weights
    assert graph_mode.text_weights([]) == {}


def test_text_weights_without_a_temperature_are_each_score_over_the_top_one(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from exograph.graphs.retrieval import graph_mode

    monkeypatch.setattr(graph_mode, "PPR_PASSAGE_TEMPERATURE", 0.0)  # the dense seeds' "raw cosine" setting
    weights = graph_mode.text_weights([("lead", 8.0), ("half", 4.0), ("zero", 0.0)])
    assert weights == {"lead": pytest.approx(1.0), "half": pytest.approx(0.5)}


@pytest.mark.django_db
def test_a_passage_written_in_the_questions_words_joins_the_walk_without_naming_its_subject(  # type: ignore[no-untyped-def]
    alice, write_doc, monkeypatch
) -> None:
    """The question names a lighthouse and asks who painted its lamp room red. Six passages name the lighthouse
    (its keepers, its fog signal, its storms, ...); one of them names a shipwright who mended its rail. The passage
    that answers ("the lamp room was painted red by" the shipwright) calls the lighthouse only "the tower": the walk
    reaches it through the shipwright's name alone, behind the lighthouse's own passages. Seeded by the question's
    words too, it ranks among the first three."""
    from exograph.graphs.retrieval import graph_mode
    from exograph.graphs.retrieval.types import GraphRead

    graph = graph_create(actor=alice, name="Text seeds", scope=Scope.PRIVATE)
    lighthouse = ("Quillon Point Lighthouse", "location", "")
    shipwright = ("Edda Varnholt", "person", "")
    for text in (
        "Quillon Point Lighthouse was kept by three families in turn over a hundred years.",
        "Quillon Point Lighthouse sounded its fog signal every thirty seconds in poor weather.",
        "Winter storms twice broke the windows of Quillon Point Lighthouse in the 1890s.",
        "Ninety-one iron stairs climb the inside of Quillon Point Lighthouse to the gallery.",
        "Quillon Point Lighthouse appears on the county flag beside a sheaf of barley.",
    ):
        write_doc(graph, alice, texts=[text], entities=[lighthouse])
    write_doc(
        graph,
        alice,
        texts=["Edda Varnholt mended the gallery rail of Quillon Point Lighthouse after the gale of 1902."],
        entities=[lighthouse, shipwright],
    )
    answer = write_doc(
        graph,
        alice,
        texts=["The lamp room of the tower was painted red by Edda Varnholt, a shipwright from the harbour."],
        entities=[shipwright],
    )
    write_doc(graph, alice, texts=["Gulls nest on the harbour wall every spring."], entities=[])
    question = "Who painted the lamp room of Quillon Point Lighthouse red?"

    def rank_of_answer() -> int | None:
        read = GraphRead(graph=graph)
        graph_mode.graph_rank(read=read, question=question, dense=[])
        order = sorted(read.passages, key=lambda cid: -read.passages[cid])
        return order.index(f"{answer}:0") + 1 if f"{answer}:0" in order else None

    assert graph_mode.PPR_TEXT_SHARE > 0  # on by default
    seeded_by_words = rank_of_answer()
    monkeypatch.setattr(graph_mode, "PPR_TEXT_SHARE", 0.0)
    names_alone = rank_of_answer()
    assert names_alone is not None and names_alone > 5
    assert seeded_by_words is not None and seeded_by_words <= 3
