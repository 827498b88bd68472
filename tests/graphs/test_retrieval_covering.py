"""Graph mode's first passages are put in order by what each adds to the ones before it (rank.covering_order): a
multi-hop question's passages each answer a part of it, and the walk alone fills the top five with siblings of the
first hop that repeat the part already covered (issue 25 §4)."""

from __future__ import annotations

import pytest

from exograph.core.scope import Scope
from exograph.graphs.services import graph_create


def test_covering_order_moves_up_the_passage_that_writes_what_the_first_does_not() -> None:
    from exograph.graphs.retrieval.rank import covering_order

    scores = {"first": 1.0, "sibling": 0.9, "twin": 0.8, "other part": 0.5, "after the pool": 0.1}
    words = {
        "first": ("orla", "venn", "album"),
        "sibling": ("orla", "venn", "album"),
        "twin": ("orla", "venn"),
        "other part": ("fire", "1990"),
        "after the pool": ("fire", "1990", "town"),
    }
    idf = {"orla": 2.0, "venn": 2.0, "album": 1.0, "fire": 2.0, "1990": 2.0, "town": 1.0}
    out = covering_order(scores, words, idf, pool=4, weight=4.0)
    assert sorted(out, key=lambda cid: -out[cid]) == ["first", "other part", "sibling", "twin", "after the pool"]
    assert sorted(out.values(), reverse=True) == sorted(scores.values(), reverse=True)  # the same scores, reordered
    assert out["after the pool"] == 0.1
    assert covering_order(scores, words, idf, pool=4, weight=0.0) == scores
    assert covering_order(scores, words, {}, pool=4, weight=4.0) == scores


def test_covering_order_keeps_its_order_through_equal_scores() -> None:
    from exograph.graphs.retrieval.rank import covering_order

    scores = {"a": 1.0, "b": 0.5, "c": 0.5, "d": 0.2}
    words = {"a": ("x",), "b": ("x",), "c": ("y",), "d": ()}
    out = covering_order(scores, words, {"x": 1.0, "y": 1.0}, pool=4, weight=4.0)
    assert sorted(out, key=lambda cid: (-out[cid], cid)) == ["a", "c", "b", "d"]  # "b" < "c" would win a tie
    assert out["c"] == 0.5 and out["b"] == pytest.approx(0.5) and out["b"] < 0.5


def test_covering_order_keeps_the_walks_order_when_nothing_adds_a_word() -> None:
    from exograph.graphs.retrieval.rank import covering_order

    scores = {"a": 3.0, "b": 2.0, "c": 2.0, "d": 1.0}
    words = {cid: ("same",) for cid in scores}
    out = covering_order(scores, words, {"same": 1.5, "unwritten": 1.0}, pool=10, weight=4.0)
    assert sorted(out, key=lambda cid: (-out[cid], cid)) == ["a", "b", "c", "d"]


@pytest.mark.django_db
def test_the_passage_answering_the_rest_of_the_question_outranks_the_first_hops_siblings(  # type: ignore[no-untyped-def]
    alice, write_doc, monkeypatch
) -> None:
    """The question names a singer and asks which fire destroyed the studio where she recorded her third album.
    Seven passages name the singer (her albums, her tours); the third album's names the studio; the studio's
    passage answers (the fire) and names neither the singer nor the album. The walk reaches it through the
    studio's name alone, behind the singer's other passages, which repeat the part of the question the album's
    passage already answers (eighth); put in order by what each adds, it comes second."""
    from exograph.graphs.retrieval import graph_mode
    from exograph.graphs.retrieval.types import GraphRead

    graph = graph_create(actor=alice, name="Covering", scope=Scope.PRIVATE)
    singer = ("Orla Venn", "person", "")
    studio = ("Greyhaven Studio", "organization", "")
    for text in (
        "Saltmarsh is the first studio album by Orla Venn, released in the spring of 1981.",
        "Lanterns is the second studio album by Orla Venn; its songs were written on a ferry.",
        "Copper Bells is the fourth studio album by Orla Venn and her best-selling record.",
        "Orla Venn toured the northern coast in 1986 with a band of four fiddlers.",
        "Orla Venn sang at the opening of the new harbour bridge in 1988.",
        "Night Crossing, a live album by Orla Venn, was taped over two evenings.",
    ):
        write_doc(graph, alice, texts=[text], entities=[singer])
    album = write_doc(
        graph,
        alice,
        texts=["Tidewrack is the third studio album by Orla Venn, recorded at Greyhaven Studio."],
        entities=[singer, ("Tidewrack", "work", ""), studio],
    )
    answer = write_doc(
        graph,
        alice,
        texts=["Greyhaven Studio stood on the quay of Port Ellery until a fire destroyed it in 1990."],
        entities=[studio, ("Port Ellery", "location", "")],
    )
    write_doc(graph, alice, texts=["Gulls nest on the harbour wall every spring."], entities=[])
    question = "Which fire destroyed the studio where Orla Venn recorded her third album?"

    def ranks() -> tuple[int | None, int | None]:
        read = GraphRead(graph=graph)
        graph_mode.graph_rank(read=read, question=question, dense=[])
        order = sorted(read.passages, key=lambda cid: -read.passages[cid])
        return tuple(order.index(f"{doc}:0") + 1 if f"{doc}:0" in order else None for doc in (album, answer))  # type: ignore[return-value]

    monkeypatch.setattr(graph_mode, "COVER_WEIGHT", 4.0)  # off by default: it lost one passage on a validation set
    covering = ranks()
    monkeypatch.setattr(graph_mode, "COVER_WEIGHT", 0.0)
    walk_alone = ranks()
    assert walk_alone[1] is not None and walk_alone[1] > 5
    assert covering[0] == 1 and covering[1] == 2
