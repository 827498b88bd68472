"""World Graph un-merge: a removed document's text leaves the World Graph (descriptions, aliases,
names, evidence and vectors), orphan vector nodes are compacted away, and counts stay exact."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Iterator

import pytest
import redis

from exograph.accounts.models import User
from exograph.core.falkor import falkordb_client
from exograph.core.scope import Scope
from exograph.graphs import store
from exograph.graphs.embeddings import get_embedder
from exograph.graphs.models import Graph
from exograph.graphs.services import (
    graph_create,
    graph_delete,
    graph_document_remove,
    graph_document_write,
    graph_reembed,
    graph_vectors_compact,
    world_graph,
)
from exograph.graphs.tasks import graph_vectors_compact_task
from exograph.graphs.types import ChunkIn, EntityIn, MentionIn, RelationIn, entity_id_for
from tests.factories import search_entities
from tests.graphs.conftest import QUANTUM_ENTITIES, QUANTUM_RELATIONS, QUANTUM_TEXTS

pytestmark = pytest.mark.django_db


ALICE_NAME = "Quantum Computing"
ALICE_DESCRIPTION = "Zyxalpha interferometric computation on superconducting zyxalpha loops, as Alice measured it."
ALICE_ALIAS = "Zyxalpha engine"
ALICE_TEXT = "Quantum Computing with zyxalpha loops needs a Qubit cooled below ten millikelvin."
BOB_NAME = "quantum computing"
BOB_DESCRIPTION = "Computing with qubits."
BOB_TEXT = "Bob writes that quantum computing uses a Qubit."
ALICE_MARKERS = ("zyxalpha", "alice", "millikelvin")  # and her spelling of the name, ALICE_NAME


def write(graph: Graph, user: User, *, name: str, description: str, aliases: tuple[str, ...], text: str) -> str:
    document_id = f"doc_{uuid.uuid4().hex[:12]}"
    chunk = ChunkIn(id=f"{document_id}:0", text=text, page=1, ordinal=0, embedding=get_embedder().embed_one(text))
    graph_document_write(
        graph=graph,
        document_id=document_id,
        filename=f"{user.email.split('@')[0]}.pdf",
        contributor=user,
        chunks=[chunk],
        entities=[
            EntityIn(name=name, type="concept", description=description, aliases=aliases),
            EntityIn(name="Qubit", type="concept"),
        ],
        mentions=[
            MentionIn(chunk_id=chunk.id, entity_name=name, entity_type="concept"),
            MentionIn(chunk_id=chunk.id, entity_name="Qubit", entity_type="concept"),
        ],
        relations=[
            RelationIn(
                source_name=name,
                source_type="concept",
                target_name="Qubit",
                target_type="concept",
                type="uses",
                chunk_ids=(chunk.id,),
            )
        ],
    )
    return document_id


def leaked(text: str) -> list[str]:
    lowered = text.casefold()
    return [marker for marker in ALICE_MARKERS if marker in lowered] + ([ALICE_NAME] if ALICE_NAME in text else [])


@pytest.fixture
def shared_entity(alice, bob) -> tuple[Graph, Graph, str]:  # type: ignore[no-untyped-def]
    """Alice, then Bob, contribute the same entity to the World Graph with different text."""
    a_graph = graph_create(actor=alice, name="A world", scope=Scope.WORLD)
    b_graph = graph_create(actor=bob, name="B world", scope=Scope.WORLD)
    a_doc = write(
        a_graph, alice, name=ALICE_NAME, description=ALICE_DESCRIPTION, aliases=(ALICE_ALIAS,), text=ALICE_TEXT
    )
    write(b_graph, bob, name=BOB_NAME, description=BOB_DESCRIPTION, aliases=(), text=BOB_TEXT)
    return a_graph, b_graph, a_doc


def test_deleted_world_document_leaves_no_text_in_search_or_world_graph(  # type: ignore[no-untyped-def]
    alice, charlie, charlie_client, shared_entity
) -> None:
    a_graph, _, a_doc = shared_entity
    before = charlie_client.get("/api/v1/world/entities/quantum computing/", {"evidence": "true"})
    assert leaked(json.dumps(before.json())), "the setup should show Alice's text while her document exists"

    graph_document_remove(graph=a_graph, document_id=a_doc)

    view = charlie_client.get("/api/v1/world/entities/quantum computing/", {"evidence": "true"})
    assert view.status_code == 200
    body = view.json()
    assert body["entity"]["name"] == BOB_NAME and body["entity"]["description"] == BOB_DESCRIPTION
    assert body["entity"]["aliases"] == []
    assert leaked(json.dumps(body)) == [], body
    for query in ("quantum computing", "zyxalpha interferometric superconducting loops", "zyxalpha engine"):
        hits = search_entities(user=charlie, query=query, scope=Scope.WORLD)
        assert leaked(json.dumps(hits)) == [], query
    api = charlie_client.get("/api/v1/entities/search", {"query": "zyxalpha quantum computing", "graph_scope": "world"})
    assert api.status_code == 200 and api.json()["count"] >= 1
    assert leaked(json.dumps(api.json()["results"])) == []


def test_deleted_world_document_vector_is_not_served(alice, shared_entity) -> None:  # type: ignore[no-untyped-def]
    a_graph, _, a_doc = shared_entity
    world = world_graph()
    eid = entity_id_for(BOB_NAME, "concept")
    alice_vector = [float(x) for x in get_embedder().embed_one(f"{ALICE_NAME}. {ALICE_DESCRIPTION}")]

    def distance_of_entity() -> float:
        lists = store.store_search_vector_lists(world.store_name, vector=alice_vector, k=10, vector_k=30, chunks=False)
        return next(-score for entity_id, score, _ in lists["entity_vector"] if entity_id == eid)

    assert distance_of_entity() < 1e-3  # Alice's own vector while her document is there
    graph_document_remove(graph=a_graph, document_id=a_doc)
    assert distance_of_entity() > 0.05  # now only Bob's vector stands for the entity


def vector_keys(store_name: str) -> dict[str, set[str]]:
    return {
        node: {row[0] for row in store.ro_query(store_name, f"MATCH (v:{node}) RETURN v.key")}
        for node in ("EntityVector", "ChunkVector")
    }


def referenced_keys(store_name: str) -> dict[str, set[str]]:
    """The vector keys entities (one per contributing document) and chunks point at."""
    entity_rows = store.ro_query(store_name, "MATCH (e:Entity) RETURN e.doc_vkeys")
    chunk_rows = store.ro_query(store_name, "MATCH (c:Chunk) RETURN c.vkey")
    return {
        "EntityVector": {key for (keys,) in entity_rows for key in keys},
        "ChunkVector": {key for (key,) in chunk_rows},
    }


def orphan_count(store_name: str) -> int:
    present, used = vector_keys(store_name), referenced_keys(store_name)
    return sum(len(present[node] - used[node]) for node in present)


def test_vector_compaction_drops_orphan_vector_nodes_and_keeps_search(  # type: ignore[no-untyped-def]
    alice, bob, shared_entity
) -> None:
    a_graph, _, a_doc = shared_entity
    world = world_graph()
    eid = entity_id_for(BOB_NAME, "concept")
    alice_key = store.ro_query(world.store_name, "MATCH (e:Entity {id: $id}) RETURN e.doc_vkeys[0]", {"id": eid})[0][0]
    before = vector_keys(world.store_name)
    assert orphan_count(world.store_name) == 0
    graph_document_remove(graph=a_graph, document_id=a_doc)
    assert vector_keys(world.store_name) == before  # write-once nodes: removal leaves them dormant
    orphans = orphan_count(world.store_name)
    assert orphans >= 2  # at least Alice's Quantum Computing vector and her chunk's

    removed = graph_vectors_compact(graph=world)
    after = vector_keys(world.store_name)
    assert removed["chunk_vectors"] == 1 and sum(removed.values()) == orphans
    assert orphan_count(world.store_name) == 0 and alice_key not in after["EntityVector"]
    assert len(after["EntityVector"]) == len(before["EntityVector"]) - removed["entity_vectors"]
    assert graph_vectors_compact(graph=world) == {"entity_vectors": 0, "chunk_vectors": 0}
    hits = search_entities(user=alice, query="quantum computing qubits", scope=Scope.WORLD)
    assert {h["name"] for h in hits} >= {BOB_NAME, "Qubit"}
    vector = [float(x) for x in get_embedder().embed_one(f"{BOB_NAME}. {BOB_DESCRIPTION}")]
    lists = store.store_search_vector_lists(world.store_name, vector=vector, k=5, chunks=True)
    assert lists["entity_vector"][0][0] == entity_id_for(BOB_NAME, "concept")
    assert lists["chunk_vector"]


def test_vector_compaction_task_covers_every_graph_and_is_scheduled(alice, shared_entity, settings) -> None:  # type: ignore[no-untyped-def]
    a_graph, _, a_doc = shared_entity
    graph_document_remove(graph=a_graph, document_id=a_doc)  # orphans in Alice's graph and in the world
    stores = [graph.store_name for graph in Graph.objects.all()]
    orphans = {name: orphan_count(name) for name in stores}
    assert orphans[a_graph.store_name] == 3 and orphans[world_graph().store_name] >= 2
    assert graph_vectors_compact_task.delay().get(timeout=60) == sum(orphans.values())
    assert all(orphan_count(name) == 0 for name in stores)
    entries = [e for e in settings.CELERY_BEAT_SCHEDULE.values() if e["task"] == graph_vectors_compact_task.name]
    assert len(entries) == 1 and entries[0]["schedule"]


# --- counts (kept incrementally) ----------------------------------------------------------------


@pytest.fixture
def world_queries() -> Iterator[Callable[[], list[str]]]:
    """The Cypher text of every query sent to the World Graph's store while the test runs (Redis MONITOR)."""
    seen: list[str] = []
    sentinel = f"h6-monitor-stop-{uuid.uuid4().hex}"
    ready = threading.Event()
    client: redis.Redis = falkordb_client().connection

    def listen() -> None:
        with client.monitor() as monitor:
            ready.set()
            while True:
                command = monitor.next_command()["command"]
                if sentinel in command:
                    return
                if "exo:world" in command:
                    seen.append(command)

    thread = threading.Thread(target=listen, daemon=True)
    thread.start()
    ready.wait(10)

    def stop() -> list[str]:
        client.echo(sentinel)
        thread.join(10)
        return seen

    yield stop


def assert_counts_exact(graph: Graph) -> None:
    """The row's counts equal a full recount of the store (worded unlike the store's own scan)."""
    graph.refresh_from_db()

    def count(cypher: str) -> int:
        rows = store.ro_query(graph.store_name, cypher)
        return int(rows[0][0]) if rows else 0

    recount = (
        count("MATCH (n:Entity) RETURN count(n)"),
        count("MATCH (:Entity)-[rel]->(:Entity) RETURN count(rel)"),
        count("MATCH (n:Document) RETURN count(n)"),
    )
    assert (graph.entity_count, graph.relation_count, graph.document_count) == recount


def test_world_counts_stay_exact_without_rescanning_relations(  # type: ignore[no-untyped-def]
    alice, bob, write_doc, world_queries, django_capture_on_commit_callbacks
) -> None:
    a_graph = graph_create(actor=alice, name="A world", scope=Scope.WORLD)
    b_graph = graph_create(actor=bob, name="B world", scope=Scope.WORLD)
    world = world_graph()
    a_doc = write_doc(a_graph, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES, relations=QUANTUM_RELATIONS)
    assert_counts_exact(world)
    b_doc = write_doc(
        b_graph,
        bob,
        texts=["Qubits power quantum computing and quantum annealing."],
        entities=[("QUANTUM COMPUTING", "concept", ""), ("qubit", "concept", ""), ("Quantum annealing", "concept", "")],
        relations=[("QUANTUM COMPUTING", "uses", "qubit"), ("Quantum annealing", "uses", "qubit")],
    )
    assert_counts_exact(world)
    write_doc(  # the same document again: replaced, not counted twice
        b_graph,
        bob,
        texts=["Qubits power quantum computing."],
        entities=[("QUANTUM COMPUTING", "concept", ""), ("qubit", "concept", "")],
        relations=[("QUANTUM COMPUTING", "uses", "qubit")],
        document_id=b_doc,
    )
    assert_counts_exact(world)
    assert (world.entity_count, world.relation_count, world.document_count) == (4, 3, 2)
    assert_counts_exact(a_graph)
    assert_counts_exact(b_graph)
    graph_document_remove(graph=a_graph, document_id=a_doc)
    assert_counts_exact(world)
    assert (world.entity_count, world.relation_count, world.document_count) == (2, 1, 1)
    write_doc(a_graph, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES, relations=QUANTUM_RELATIONS)
    with django_capture_on_commit_callbacks(execute=True):
        graph_delete(actor=alice, graph_id=a_graph.id)
    assert_counts_exact(world)
    graph_document_remove(graph=b_graph, document_id=b_doc)
    assert_counts_exact(world)
    assert (world.entity_count, world.relation_count, world.document_count) == (0, 0, 0)

    scans = [q for q in world_queries() if "MATCH (:Entity)-[r]->(:Entity) RETURN count(r)" in q]
    assert scans == [], "a write to the World Graph must not count every relation again"


def test_reembed_keeps_one_vector_per_contributing_document(alice, shared_entity) -> None:  # type: ignore[no-untyped-def]
    a_graph, _, a_doc = shared_entity
    world = world_graph()
    counts = graph_reembed(graph=world)
    assert counts["entities"] == 2 and orphan_count(world.store_name) == 0
    graph_document_remove(graph=a_graph, document_id=a_doc)
    alice_vector = [float(x) for x in get_embedder().embed_one(f"{ALICE_NAME}. {ALICE_DESCRIPTION}")]
    lists = store.store_search_vector_lists(world.store_name, vector=alice_vector, k=10, vector_k=30, chunks=False)
    eid = entity_id_for(BOB_NAME, "concept")
    assert next(-score for entity_id, score, _ in lists["entity_vector"] if entity_id == eid) > 0.05


def test_search_answers_from_full_text_while_a_vector_index_is_rebuilt(alice, shared_entity) -> None:  # type: ignore[no-untyped-def]
    world = world_graph()
    store.query(world.store_name, "DROP VECTOR INDEX FOR (v:EntityVector) ON (v.embedding)")
    store.query(world.store_name, "DROP VECTOR INDEX FOR (v:ChunkVector) ON (v.embedding)")
    hits = search_entities(user=alice, query="quantum computing", scope=Scope.WORLD)
    assert hits and hits[0]["name"] in (ALICE_NAME, BOB_NAME)


def test_entities_written_before_per_document_lists_still_unmerge(alice, bob, shared_entity) -> None:  # type: ignore[no-untyped-def]
    a_graph, b_graph, a_doc = shared_entity
    world = world_graph()
    store.query(
        world.store_name,
        "MATCH (e:Entity) SET e.doc_names = NULL, e.doc_descriptions = NULL, e.doc_aliases = NULL, "
        "e.doc_alias_keys = NULL, e.doc_vkeys = NULL",
    )
    b_doc = next(d for d in store.store_document_ids(b_graph.store_name))
    graph_document_remove(graph=b_graph, document_id=b_doc)
    assert_counts_exact(world)
    found = store.store_entities(world.store_name, [entity_id_for(BOB_NAME, "concept")])
    assert found[entity_id_for(BOB_NAME, "concept")]["description"] == ALICE_DESCRIPTION  # the merged text stays
    graph_document_remove(graph=a_graph, document_id=a_doc)
    assert_counts_exact(world)
    assert (world.entity_count, world.relation_count, world.document_count) == (0, 0, 0)
