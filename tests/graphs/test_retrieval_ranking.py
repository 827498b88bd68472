"""Graph mode's ranking options (issue 25 §4): synonym edges over the whole query-time subgraph, dense seeds weighed
by the retriever's confidence, the walk's order fused with the dense order, seed specificity's power, passage mass
by degree (bench/results/retrieval-experiments.md says which are on)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from exograph.core.scope import Scope
from exograph.graphs.retrieval import retrieve
from exograph.graphs.services import graph_create
from exograph.graphs.types import entity_id_for


def test_dense_seeds_weigh_by_cosine_or_by_the_retrievers_confidence(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from exograph.graphs.retrieval import graph_mode

    hits = [("a", 0.62), ("b", 0.60), ("c", 0.41), ("d", -0.1)]
    assert graph_mode.PPR_PASSAGE_TEMPERATURE == 0.1  # the default: a softmax
    assert graph_mode.passage_weights(hits)["c"] == pytest.approx(math.exp(-0.21 / 0.1))
    assert graph_mode.passage_weights([]) == {}
    monkeypatch.setattr(graph_mode, "PPR_PASSAGE_TEMPERATURE", 0.0)
    assert graph_mode.passage_weights(hits) == {"a": 0.62, "b": 0.60, "c": 0.41, "d": 0.0}  # off: the cosine
    monkeypatch.setattr(graph_mode, "PPR_PASSAGE_TEMPERATURE", 0.05)
    weights = graph_mode.passage_weights(hits)
    assert weights["a"] == 1.0
    assert weights["b"] == pytest.approx(math.exp(-0.02 / 0.05))
    assert weights["c"] < 0.02 < weights["b"]  # far below the best: next to nothing
    assert weights["d"] > 0.0  # never negative, whatever the cosine


def test_degree_normalised_divides_by_the_weighted_degree_of_both_ends() -> None:
    from exograph.graphs.retrieval.graph_mode import degree_normalised

    # node 0 is a hub (three edges), node 3 a leaf, node 4 has no edge at all
    edges = [(0, 1, 1.0), (0, 2, 2.0), (3, 0, 1.0)]
    rank = np.array([0.4, 0.2, 0.2, 0.1, 0.1])
    out = degree_normalised(rank, edges, power=1.0)
    assert out.tolist() == pytest.approx([0.4 / 4.0, 0.2 / 1.0, 0.2 / 2.0, 0.1 / 1.0, 0.1])
    half = degree_normalised(rank, edges, power=0.5)
    assert half[0] == pytest.approx(0.4 / 2.0) and half[4] == pytest.approx(0.1)
    assert degree_normalised(rank, [], power=1.0).tolist() == rank.tolist()


def test_dense_fusion_adds_the_dense_order_by_reciprocal_rank() -> None:
    from exograph.graphs.retrieval.graph_mode import dense_fused
    from exograph.graphs.selectors.search import RRF_K

    walk = {"hub": 0.5, "chain": 0.3, "far": 0.1}
    fused = dense_fused(walk, ["far", "lonely", "chain"], weight=1.0)
    assert fused["hub"] == pytest.approx(1 / (RRF_K + 1))
    assert fused["far"] == pytest.approx(1 / (RRF_K + 3) + 1 / (RRF_K + 1))
    assert fused["lonely"] == pytest.approx(1 / (RRF_K + 2))  # a dense hit the walk did not score
    assert sorted(fused, key=lambda c: -fused[c]) == ["far", "chain", "hub", "lonely"]
    light = dense_fused(walk, ["far", "lonely", "chain"], weight=0.01)
    assert sorted(light, key=lambda c: -light[c])[:3] == ["hub", "chain", "far"]  # a light dense list: the walk's order


@pytest.mark.django_db
def test_specificity_power_softens_how_much_a_rare_seed_outweighs_a_common_one(  # type: ignore[no-untyped-def]
    alice, write_doc, monkeypatch
) -> None:
    """The question names a rare thing (one passage) and a common one (six passages). At power 1 the rare name's
    passage holds the most mass over a common name's; the lower the power, the less it leads (at 0 each seed
    weighs alike)."""
    from exograph.graphs.retrieval import graph_mode
    from exograph.graphs.retrieval.types import GraphRead

    graph = graph_create(actor=alice, name="Specificity", scope=Scope.PRIVATE)
    rare = write_doc(
        graph,
        alice,
        texts=["Quillon Abbey keeps a library of hand-copied herbals near its cloister."],
        entities=[("Quillon Abbey", "organization", "")],
    )
    common = [
        write_doc(
            graph,
            alice,
            texts=[f"A monastery library number {n} in Europe kept herbals and other old books."],
            entities=[("Europe", "location", "")],
        )
        for n in range(6)
    ]
    question = "Which library in Europe keeps herbals, the one of Quillon Abbey?"

    def lead() -> float:
        read = GraphRead(graph=graph)
        graph_mode.graph_rank(read=read, question=question, dense=[])
        return read.passages[f"{rare}:0"] / read.passages[f"{common[0]}:0"]

    leads = []
    for power in (1.0, 0.5, 0.0):
        monkeypatch.setattr(graph_mode, "SEED_SPECIFICITY_POWER", power)
        leads.append(lead())
    assert leads[0] > leads[1] > leads[2] > 0


@pytest.mark.django_db
def test_subgraph_synonyms_tie_two_names_of_the_subgraph_by_their_entity_vectors(  # type: ignore[no-untyped-def]
    alice, write_doc, monkeypatch
) -> None:
    """The question names a defector whose passage writes "USSR"; another passage of the subgraph (a weak dense
    hit) writes "the Soviet Union". No alias ties the two names; their stored entity vectors lie close. With
    synonym edges over the subgraph the walk crosses from one to the other and that passage stands far above the
    passages that merely look like the question; without them it hardly does."""
    from exograph.graphs.retrieval import graph_mode, synonyms

    graph = graph_create(actor=alice, name="Subgraph synonyms", scope=Scope.PRIVATE)
    write_doc(
        graph,
        alice,
        texts=["Ivan Petrov defected from the USSR to Canada in 1971."],
        entities=[("Ivan Petrov", "person", ""), ("USSR", "location", ""), ("Canada", "location", "")],
    )
    launch = write_doc(
        graph,
        alice,
        texts=["The Soviet Union launched Sputnik from Baikonur in 1957."],
        entities=[("Soviet Union", "location", ""), ("Sputnik", "product", ""), ("Baikonur", "location", "")],
    )
    look_alikes = [
        write_doc(
            graph,
            alice,
            texts=[f"Defector number {n} fled from a country in 1971 and then lived in exile for years."],
            entities=[],
        )
        for n in range(6)
    ]
    ids = {
        key: [entity_id_for(name, kind)]
        for key, name, kind in [
            ("ussr", "USSR", "location"),
            ("soviet union", "Soviet Union", "location"),
            ("canada", "Canada", "location"),
            ("sputnik", "Sputnik", "product"),
        ]
    }
    assert synonyms.subgraph_synonyms(graph.store_name, ids) == []  # off
    monkeypatch.setattr(synonyms, "SYNONYM_SUBGRAPH_K", 3)
    found = synonyms.subgraph_synonyms(graph.store_name, ids)
    assert [(a, b) for a, b, _ in found] == [("soviet union", "ussr")]  # not Canada, not Sputnik
    assert found[0][2] >= 0.8

    question = "Which country did Ivan Petrov defect from in 1971?"

    def lead_of_launch() -> float:
        """The launch passage's score over the best look-alike's (the passages that name no one)."""
        result = retrieve(actor=alice, graphs=[graph], question=question, mode="graph", top_k=10)
        scores = {item.document_id: item.score for item in result.items if item.kind == "passage"}
        return scores[launch] / max(scores[doc] for doc in look_alikes)

    monkeypatch.setattr(graph_mode, "SYNONYM_SUBGRAPH_K", 3)
    assert lead_of_launch() > 6.0
    monkeypatch.setattr(graph_mode, "SYNONYM_SUBGRAPH_K", 0)
    assert lead_of_launch() < 3.0
