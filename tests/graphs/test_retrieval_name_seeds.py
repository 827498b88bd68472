"""A name the question writes as a name (capitalised) seeds graph mode's walk above a lowercase phrase that
extraction once made a node: "cast member" is rare as a node (one passage), so by specificity alone it outweighed
the film the question names, and its one passage led the ranking (issue 25 §4, SEED_NAME_BOOST)."""

from __future__ import annotations

import pytest

from exograph.core.scope import Scope
from exograph.graphs.services import graph_create


@pytest.mark.django_db
def test_the_name_the_question_writes_outweighs_a_rare_common_phrase(  # type: ignore[no-untyped-def]
    alice, write_doc, monkeypatch
) -> None:
    """Two passages name the film Halden Row; one names its star, whose own passage names her son. One passage,
    about another show, is tied to the node "cast member". Asked for the child of Halden Row's cast member, the
    film's passage comes first; weighed by specificity alone (the common phrase's one passage against the film's
    two), the other show's passage led."""
    from exograph.graphs.retrieval import graph_mode
    from exograph.graphs.retrieval.types import GraphRead

    graph = graph_create(actor=alice, name="Name seeds", scope=Scope.PRIVATE)
    film = ("Halden Row", "work", "")
    star = ("Mira Holt", "person", "")
    film_passage = write_doc(
        graph,
        alice,
        texts=["Halden Row is a 1979 drama film starring Mira Holt as a ferry pilot."],
        entities=[film, star],
    )
    write_doc(graph, alice, texts=["Halden Row was shot on the islands over one wet summer."], entities=[film])
    write_doc(
        graph, alice, texts=["Mira Holt married a painter; their son Tomas Holt became a sculptor."], entities=[star]
    )
    other_show = write_doc(
        graph,
        alice,
        texts=["Every cast member of Lowbridge Tales sang the theme song in the last episode."],
        entities=[("cast member", "concept", ""), ("Lowbridge Tales", "work", "")],
    )
    write_doc(graph, alice, texts=["Gulls nest on the harbour wall every spring."], entities=[])
    question = "Who is the child of the cast member of Halden Row?"

    def order() -> list[str]:
        read = GraphRead(graph=graph)
        graph_mode.graph_rank(read=read, question=question, dense=[])
        return [cid.split(":")[0] for cid in sorted(read.passages, key=lambda cid: -read.passages[cid])]

    assert graph_mode.SEED_NAME_BOOST > 1  # on by default
    monkeypatch.setattr(graph_mode, "PPR_TEXT_SHARE", 0.0)  # the seeds alone: no full-text hits in the walk's start
    boosted = order()
    monkeypatch.setattr(graph_mode, "SEED_NAME_BOOST", 1.0)
    by_specificity = order()
    assert by_specificity[0] == other_show
    assert boosted[0] == film_passage
