from __future__ import annotations

import pytest

from billing.models import WorldUsage
from exograph.core import falkor
from exograph.core.errors import Conflict, NotFound, PermissionDenied, ServiceUnavailable, ValidationError
from exograph.core.scope import Scope
from exograph.graphs import store
from exograph.graphs.models import Graph, GraphKind
from exograph.graphs.retrieval import entity_search, retrieve_for_user
from exograph.graphs.selectors import (
    graph_get_for_user,
    graph_list_for_user,
    world_entity_read,
)
from exograph.graphs.services import (
    entities_search,
    graph_create,
    graph_default_for_user,
    graph_delete,
    graph_document_remove,
    graph_rename,
    world_entity_lookup,
)
from exograph.graphs.types import entity_id_for
from tests.factories import search_entities
from tests.graphs.conftest import QUANTUM_ENTITIES, QUANTUM_RELATIONS, QUANTUM_TEXTS

pytestmark = pytest.mark.django_db


def test_create_makes_store_with_indexes_and_records_embedder(alice) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Papers", scope=Scope.PRIVATE)
    assert graph.embedding_model and graph.embedding_dim == 384
    assert store.store_vector_dimension(graph.store_name) == 384


def test_create_rejects_duplicate_and_blank_names(alice) -> None:  # type: ignore[no-untyped-def]
    graph_create(actor=alice, name="Papers", scope=Scope.PRIVATE)
    with pytest.raises(Conflict):
        graph_create(actor=alice, name=" Papers ", scope=Scope.WORLD)
    with pytest.raises(ValidationError):
        graph_create(actor=alice, name="   ", scope=Scope.PRIVATE)


def test_rename_and_delete_only_by_owner(alice, bob, charlie, django_capture_on_commit_callbacks) -> None:  # type: ignore[no-untyped-def]
    private = graph_create(actor=alice, name="Mine", scope=Scope.PRIVATE)
    shared = graph_create(actor=alice, name="Shared", scope=Scope.WORLD)
    with pytest.raises(NotFound) as missing:
        graph_rename(actor=charlie, graph_id="graph_missing", name="x")
    with pytest.raises(NotFound) as foreign:
        graph_rename(actor=charlie, graph_id=private.id, name="x")
    assert missing.value.message.replace("graph_missing", "") == foreign.value.message.replace(private.id, "")
    with pytest.raises(PermissionDenied):
        graph_delete(actor=bob, graph_id=shared.id)
    with pytest.raises(PermissionDenied):
        graph_delete(actor=bob, graph_id="world")
    assert graph_rename(actor=alice, graph_id=private.id, name="Renamed").name == "Renamed"
    with django_capture_on_commit_callbacks(execute=True):
        graph_delete(actor=alice, graph_id=private.id)
    assert not Graph.objects.filter(id=private.id).exists()
    assert store.ro_query(private.store_name, "MATCH (n) RETURN count(n)") == []


def test_default_graph_is_created_once(alice) -> None:  # type: ignore[no-untyped-def]
    first = graph_default_for_user(actor=alice, scope=Scope.PRIVATE)
    again = graph_default_for_user(actor=alice, scope=Scope.PRIVATE)
    world = graph_default_for_user(actor=alice, scope=Scope.WORLD)
    research = graph_default_for_user(actor=alice, scope=Scope.PRIVATE, kind=GraphKind.RESEARCH)
    assert first.id == again.id
    assert len({first.id, world.id, research.id}) == 3
    assert first.kind == GraphKind.DOCUMENT and world.scope == Scope.WORLD


def test_default_graph_avoids_a_taken_name(alice) -> None:  # type: ignore[no-untyped-def]
    graph_create(actor=alice, name="My documents", scope=Scope.PRIVATE)
    default = graph_default_for_user(actor=alice, scope=Scope.PRIVATE)
    assert default.name == "My documents 2" and default.is_default


def test_write_is_idempotent_and_counts(alice, write_doc) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Q", scope=Scope.PRIVATE)
    for _ in range(2):
        write_doc(
            graph,
            alice,
            texts=QUANTUM_TEXTS,
            entities=QUANTUM_ENTITIES,
            relations=QUANTUM_RELATIONS,
            document_id="doc_same",
        )
    graph.refresh_from_db()
    assert (graph.entity_count, graph.relation_count, graph.document_count) == (4, 3, 1)
    rows = store.store_related(graph.store_name, entity_id=entity_id_for("Qubit", "concept"), limit=10)
    assert sorted(r["strength"] for r in rows) == [1, 1]


def test_entities_resolve_by_normalised_name_and_type_keeping_aliases(alice, write_doc) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Q", scope=Scope.PRIVATE)
    write_doc(graph, alice, texts=["Café culture in Paris."], entities=[("Café", "Place", "")])
    write_doc(graph, alice, texts=["The cafe is open."], entities=[("  CAFE ", "place", "A coffee house.")])
    graph.refresh_from_db()
    assert graph.entity_count == 1
    found = store.store_entities(graph.store_name, [entity_id_for("cafe", "place")])
    row = found[entity_id_for("cafe", "place")]
    assert row["name"] == "Café" and "CAFE" in row["aliases"] and row["description"] == "A coffee house."


def test_search_finds_entities_with_relevance_and_context(alice, write_doc) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Q", scope=Scope.PRIVATE)
    write_doc(graph, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES, relations=QUANTUM_RELATIONS)
    hits = search_entities(user=alice, query="quantum error correction", scope=Scope.PRIVATE)
    assert hits[0]["name"] == "Quantum error correction"
    assert hits[0]["relevance"] == 1.0
    assert all(0 <= h["relevance"] <= 1 for h in hits)
    assert all(len(h["context"]) <= 300 for h in hits)
    assert hits[0]["graph_id"] == graph.id and hits[0]["graph_name"] == "Q"
    shor = (
        next(h for h in hits if h["name"] == "Shor's algorithm")
        if any(h["name"] == "Shor's algorithm" for h in hits)
        else None
    )
    if shor is not None:
        assert "Shor" in shor["context"]  # no description: a passage that mentions it


@pytest.mark.parametrize("bad", ["", "   ", "x" * 1001])
def test_search_rejects_empty_and_long_queries(alice, bad) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValidationError):
        search_entities(user=alice, query=bad, scope=Scope.PRIVATE)


@pytest.mark.parametrize("n", [0, 101, 1000, -1])
def test_search_rejects_n_results_out_of_range(alice, n) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValidationError):
        search_entities(user=alice, query="x", n_results=n, scope=Scope.PRIVATE)


@pytest.mark.parametrize("text", ["') RETURN 1 //", "`MATCH (n) DETACH DELETE n`", "$param", "@x:{y} -z ~w"])
def test_cypher_looking_queries_are_just_text(alice, write_doc, text) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Q", scope=Scope.PRIVATE)
    write_doc(graph, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES)
    search_entities(user=alice, query=text, scope=Scope.PRIVATE)
    graph.refresh_from_db()
    assert store.store_counts(graph.store_name)["entities"] == 4


def test_private_search_never_sees_other_accounts(alice, charlie, write_doc) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Secret", scope=Scope.PRIVATE)
    write_doc(graph, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES)
    assert search_entities(user=charlie, query="quantum", scope=Scope.PRIVATE) == []
    assert search_entities(user=charlie, query="quantum", scope=Scope.WORLD) == []
    with pytest.raises(NotFound):
        search_entities(user=charlie, query="quantum", graph_id=graph.id, scope=Scope.PRIVATE)
    with pytest.raises(NotFound):
        graph_get_for_user(user=charlie, graph_id=graph.id)
    assert [g.id for g in graph_list_for_user(user=charlie, scope=Scope.PRIVATE)] == []


def test_world_merge_keeps_provenance_and_unmerges(alice, bob, charlie, write_doc) -> None:  # type: ignore[no-untyped-def]
    a_graph = graph_create(actor=alice, name="A world", scope=Scope.WORLD)
    b_graph = graph_create(actor=bob, name="B world", scope=Scope.WORLD)
    a_doc = write_doc(a_graph, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES, relations=QUANTUM_RELATIONS)
    b_doc = write_doc(
        b_graph,
        bob,
        texts=["Qubits power quantum computing."],
        entities=[("QUANTUM COMPUTING", "Concept", ""), ("qubit", "concept", "")],
        relations=[("QUANTUM COMPUTING", "uses", "qubit")],
        filename="bob.pdf",
    )
    view = world_entity_lookup(actor=charlie, entity="quantum computing", evidence=True)
    uses = next(r for r in view["related"] if r["name"] == "Qubit")
    assert uses["relationship"] == "uses" and uses["direction"] == "outgoing"
    assert uses["strength"] == 2 and uses["sources"] == ["bob.pdf", "paper.pdf"]
    assert uses["evidence"] and all(len(e["text"]) <= 500 for e in uses["evidence"])
    assert [r["strength"] for r in view["related"]] == sorted((r["strength"] for r in view["related"]), reverse=True)
    record = WorldUsage.objects.get(querier=charlie)
    assert sorted(record.contributor_ids) == sorted([alice.pk, bob.pk])

    # Case and accent insensitive; by id too.
    assert world_entity_lookup(actor=alice, entity="  QUANTUM   Computing ")["entity"]["id"] == view["entity"]["id"]
    assert world_entity_lookup(actor=alice, entity=view["entity"]["id"])["entity"]["name"] == "Quantum computing"

    graph_document_remove(graph=b_graph, document_id=b_doc)
    uses = next(
        r for r in world_entity_lookup(actor=charlie, entity="quantum computing")["related"] if r["name"] == "Qubit"
    )
    assert uses["strength"] == 1 and uses["sources"] == ["paper.pdf"]

    graph_delete(actor=alice, graph_id=a_graph.id)
    with pytest.raises(NotFound):
        world_entity_lookup(actor=charlie, entity="quantum computing")
    assert store.store_counts("exo:world")["entities"] == 0
    assert a_doc


def test_world_search_records_other_contributors_only(alice, bob, write_doc) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="W", scope=Scope.WORLD)
    write_doc(graph, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES)
    hits = entities_search(actor=alice, query="qubit", scope=Scope.WORLD)
    assert hits and hits[0]["graph_id"] == "world"
    assert not WorldUsage.objects.filter(querier=alice).exists()
    entities_search(actor=bob, query="qubit", scope=Scope.WORLD)
    assert WorldUsage.objects.get(querier=bob).contributor_ids == [alice.pk]


def test_world_entity_not_found_suggests_names(alice, bob, write_doc) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="W", scope=Scope.WORLD)
    write_doc(graph, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES)
    with pytest.raises(NotFound) as exc:
        world_entity_lookup(actor=bob, entity="quantum error")
    assert "Quantum error correction" in exc.value.extra["suggestions"]
    with pytest.raises(ValidationError):
        world_entity_lookup(actor=bob, entity="qubit", limit=101)


def test_other_embedder_is_refused_with_the_fix(alice, write_doc) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Q", scope=Scope.PRIVATE)
    Graph.objects.filter(pk=graph.pk).update(embedding_model="openai:text-embedding-3-small", embedding_dim=1536)
    with pytest.raises(Conflict) as exc:
        search_entities(user=alice, query="x", graph_id=graph.id, scope=Scope.PRIVATE)
    assert "reembed_graph" in exc.value.hint and "openai:text-embedding-3-small" in exc.value.message


def test_reembed_command_rebuilds_vectors(alice, write_doc) -> None:  # type: ignore[no-untyped-def]
    from django.core.management import call_command

    graph = graph_create(actor=alice, name="Q", scope=Scope.PRIVATE)
    write_doc(graph, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES)
    Graph.objects.filter(pk=graph.pk).update(embedding_model="old-model", embedding_dim=384)
    call_command("reembed_graph", graph.id)
    graph.refresh_from_db()
    assert graph.embedding_model != "old-model"
    assert search_entities(user=alice, query="qubit", graph_id=graph.id, scope=Scope.PRIVATE)[0]["name"] == "Qubit"


def test_retrieve_returns_typed_entity_relation_and_passage_evidence(alice, write_doc) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Q", scope=Scope.PRIVATE)
    write_doc(graph, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES, relations=QUANTUM_RELATIONS)
    items = retrieve_for_user(actor=alice, question="qubits", scope=Scope.PRIVATE, hops=2).items
    assert {"entity", "relation", "passage"} <= {item.kind for item in items}


def test_store_down_is_a_503_naming_the_graph_store(alice, settings, tmp_path) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Q", scope=Scope.PRIVATE)
    live = settings.FALKORDB_URL
    settings.FALKORDB_URL = f"unix://{tmp_path}/dead.sock"
    falkor._clients.clear()
    try:
        with pytest.raises(ServiceUnavailable) as exc:
            search_entities(user=alice, query="qubit", graph_id=graph.id, scope=Scope.PRIVATE)
        assert "graph store" in exc.value.message
        with pytest.raises(ServiceUnavailable):
            graph_create(actor=alice, name="Another", scope=Scope.PRIVATE)
        assert not Graph.objects.filter(name="Another").exists()
    finally:
        settings.FALKORDB_URL = live
        falkor._clients.clear()


def test_world_usage_is_paid_after_commit(alice, bob, write_doc, django_capture_on_commit_callbacks) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="W", scope=Scope.WORLD)
    write_doc(graph, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        entities_search(actor=bob, query="qubit", scope=Scope.WORLD)
    assert len(callbacks) == 1
    record = WorldUsage.objects.get(querier=bob)
    assert record.paid_at is not None


def test_deleting_an_account_unmerges_its_world_knowledge_and_drops_its_stores(
    alice, charlie, write_doc, falkordb, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    private = graph_create(actor=alice, name="Mine", scope=Scope.PRIVATE)
    shared = graph_create(actor=alice, name="Shared", scope=Scope.WORLD)
    write_doc(shared, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES, relations=QUANTUM_RELATIONS)
    assert world_entity_lookup(actor=charlie, entity="quantum computing")["entity"]["name"] == "Quantum computing"
    with django_capture_on_commit_callbacks(execute=True):
        alice.delete()
    with pytest.raises(NotFound):
        world_entity_lookup(actor=charlie, entity="quantum computing")
    remaining = set(falkordb.list_graphs())
    assert private.store_name not in remaining and shared.store_name not in remaining


def test_search_and_world_selectors_only_read_and_return_the_contributors(  # type: ignore[no-untyped-def]
    alice, bob, write_doc, django_capture_on_commit_callbacks
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    graph = graph_create(actor=alice, name="W", scope=Scope.WORLD)
    write_doc(graph, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES, relations=QUANTUM_RELATIONS)
    with CaptureQueriesContext(connection) as queries, django_capture_on_commit_callbacks() as callbacks:
        found = entity_search(user=bob, query="qubit", scope=Scope.WORLD)
        hits = search_entities(user=bob, query="qubit", scope=Scope.WORLD)
        read = world_entity_read(user=bob, entity="quantum computing")
        retrieval = retrieve_for_user(actor=bob, question="qubit", scope=Scope.WORLD)
    statements = [q["sql"].split()[0].upper() for q in queries.captured_queries]
    assert set(statements) <= {"SELECT"}, statements
    assert callbacks == []  # no task enqueued either
    assert not WorldUsage.objects.exists()
    assert found["hits"] == hits and found["contributor_ids"] == [alice.pk]
    assert read["contributor_ids"] == [alice.pk] and read["view"]["entity"]["name"] == "Quantum computing"
    assert retrieval.contributor_ids == [alice.pk] and retrieval.items


def test_graphs_selectors_and_services_import_each_other_one_way_only() -> None:
    import ast
    from pathlib import Path

    import exograph.graphs.selectors as selectors_module
    import exograph.graphs.services as services_module

    def imports(module: object, *, nested_only: bool) -> set[str]:
        path = Path(str(getattr(module, "__file__", "")))
        files = sorted(path.parent.glob("*.py")) if path.name == "__init__.py" else [path]  # a package: every module
        assert files
        found: set[str] = set()
        for file in files:
            tree = ast.parse(file.read_text())
            scopes: list[ast.AST] = (
                [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)] if nested_only else [tree]
            )
            for scope in scopes:
                for node in ast.walk(scope):
                    if isinstance(node, ast.ImportFrom) and node.module:
                        found.add(node.module)
                    elif isinstance(node, ast.Import):
                        found.update(alias.name for alias in node.names)
        return found

    assert not any(m.startswith("exograph.graphs.services") for m in imports(selectors_module, nested_only=False))
    assert not any(m.startswith("exograph.") for m in imports(services_module, nested_only=True))
