"""Canary for FalkorDB issue #2179: the shipped server loses a vector-indexed node from KNN results
once the node is updated. exograph/graphs/store keeps vectors on write-once EntityVector/ChunkVector
nodes and rebuilds the index to drop orphans only because of it; this test says when that changes."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from falkordb import FalkorDB, Graph

WORKAROUND = (
    "FalkorDB issue #2179 behaves differently on this server: {what}. If vector search now finds an updated "
    "node, the upstream fix (PR #2197) has landed: the write-once EntityVector/ChunkVector nodes and the "
    "index rebuild of vectors_compact can be simplified (see exograph/graphs/store/core.py), then update "
    "this canary to assert the fixed behaviour."
)
# k = the number of live nodes: a fixed index returns every node; the broken one loses the updated node.
KNN = (
    "CALL db.idx.vector.queryNodes('Probe', 'embedding', 2, vecf32($v)) YIELD node, score "
    "RETURN node.key ORDER BY score ASC"
)


@pytest.fixture
def probe_graph(falkordb: FalkorDB) -> Iterator[Graph]:
    graph = falkordb.select_graph(f"exo:canary_{uuid.uuid4().hex[:8]}")
    graph.query("CREATE VECTOR INDEX FOR (p:Probe) ON (p.embedding) OPTIONS {dimension:3, similarityFunction:'cosine'}")
    graph.query(
        "CREATE (:Probe {key: 'a', embedding: vecf32([1.0, 0.0, 0.0])}), "
        "(:Probe {key: 'b', embedding: vecf32([0.0, 1.0, 0.0])})"
    )
    yield graph
    graph.delete()


def test_updated_vector_node_disappears_from_vector_search_upstream_2179(probe_graph: Graph) -> None:
    before = [row[0] for row in probe_graph.query(KNN, {"v": [1.0, 0.0, 0.0]}).result_set]
    assert before == ["a", "b"], WORKAROUND.format(what=f"a fresh index returned {before}")
    # Rewrite the node's own vector with the same value, twice: on a fixed server nothing changes.
    for _ in range(2):
        probe_graph.query("MATCH (p:Probe {key: 'a'}) SET p.embedding = vecf32([1.0, 0.0, 0.0])")
    stored = probe_graph.query("MATCH (p:Probe {key: 'a'}) RETURN count(p)").result_set
    assert stored == [[1]]
    after = [row[0] for row in probe_graph.query(KNN, {"v": [1.0, 0.0, 0.0]}).result_set]
    assert "a" not in after, WORKAROUND.format(what=f"the updated node is found again ({after})")
