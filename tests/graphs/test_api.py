from __future__ import annotations

import pytest

from billing.models import WorldUsage
from exograph.core import falkor
from exograph.core.scope import Scope
from exograph.graphs.models import Graph
from exograph.graphs.services import graph_create
from tests.graphs.conftest import QUANTUM_ENTITIES, QUANTUM_RELATIONS, QUANTUM_TEXTS

pytestmark = pytest.mark.django_db


def error_code(response) -> str:  # type: ignore[no-untyped-def]
    return str(response.json()["error"]["code"])


def test_list_graphs_follows_scope_header_and_argument(alice, alice_client) -> None:  # type: ignore[no-untyped-def]
    private = graph_create(actor=alice, name="Notes", scope=Scope.PRIVATE)
    shared = graph_create(actor=alice, name="Shared", scope=Scope.WORLD)
    body = alice_client.get("/api/v1/graphs/").json()
    assert [g["id"] for g in body["results"]] == [private.id]
    assert set(body["results"][0]) >= {"id", "name", "scope", "type", "created", "counts"}
    assert body["results"][0]["counts"] == {"entities": 0, "relations": 0, "documents": 0}
    world = alice_client.get("/api/v1/graphs/", HTTP_X_GRAPH_SCOPE="world").json()
    assert {g["id"] for g in world["results"]} == {shared.id, "world"}
    overridden = alice_client.get("/api/v1/graphs/?graph_scope=private", HTTP_X_GRAPH_SCOPE="world").json()
    assert [g["id"] for g in overridden["results"]] == [private.id]
    bad = alice_client.get("/api/v1/graphs/?graph_scope=public")
    assert bad.status_code == 400 and "world" in bad.json()["error"]["message"]


def test_create_rename_delete_graph(alice_client) -> None:  # type: ignore[no-untyped-def]
    created = alice_client.post("/api/v1/graphs/", {"name": "Papers", "graph_scope": "world"}, format="json")
    assert created.status_code == 201
    graph_id = created.json()["id"]
    assert created.json()["scope"] == "world" and created.json()["type"] == "manual"
    dup = alice_client.post("/api/v1/graphs/", {"name": "Papers"}, format="json")
    assert dup.status_code == 409 and error_code(dup) == "graph_name_taken"
    assert alice_client.post("/api/v1/graphs/", {"name": ""}, format="json").status_code == 400
    renamed = alice_client.patch(f"/api/v1/graphs/{graph_id}/", {"name": "Renamed"}, format="json")
    assert renamed.status_code == 200 and renamed.json()["name"] == "Renamed"
    assert alice_client.delete(f"/api/v1/graphs/{graph_id}/").status_code == 204
    assert alice_client.get(f"/api/v1/graphs/{graph_id}/").status_code == 404


@pytest.mark.parametrize("method", ["get", "patch", "delete"])
def test_foreign_private_graph_is_404_like_missing(alice, charlie_client, method) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Secret", scope=Scope.PRIVATE)
    call = getattr(charlie_client, method)
    foreign = call(f"/api/v1/graphs/{graph.id}/", {"name": "x"}, format="json")
    missing = call("/api/v1/graphs/graph_doesnotexist/", {"name": "x"}, format="json")
    assert foreign.status_code == missing.status_code == 404
    assert foreign.json()["error"]["code"] == missing.json()["error"]["code"]
    assert foreign.json()["error"]["message"].replace(graph.id, "ID") == missing.json()["error"]["message"].replace(
        "graph_doesnotexist", "ID"
    )
    assert Graph.objects.get(id=graph.id).name == "Secret"


def test_world_scope_graph_is_readable_not_writable_by_others(alice, bob_client) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Shared", scope=Scope.WORLD)
    assert bob_client.get(f"/api/v1/graphs/{graph.id}/").json()["owned"] is False
    assert bob_client.patch(f"/api/v1/graphs/{graph.id}/", {"name": "x"}, format="json").status_code == 403
    assert bob_client.delete(f"/api/v1/graphs/{graph.id}/").status_code == 403
    assert bob_client.delete("/api/v1/graphs/world/").status_code == 403


def test_search_contract(alice, alice_client, write_doc) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Q", scope=Scope.PRIVATE)
    write_doc(graph, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES, relations=QUANTUM_RELATIONS)
    response = alice_client.get("/api/v1/entities/search", {"query": "qubit", "n_results": 3})
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == len(body["results"]) <= 3
    first = body["results"][0]
    assert set(first) == {"id", "name", "type", "graph_id", "graph_name", "relevance", "context"}
    assert first["name"] == "Qubit" and first["relevance"] == 1.0


@pytest.mark.parametrize(
    ("params", "fragment"),
    [
        ({"query": "x", "n_results": 0}, "n_results"),
        ({"query": "x", "n_results": 1000}, "n_results"),
        ({"query": "x", "n_results": "many"}, "n_results"),
        ({"query": ""}, "query"),
        ({"query": "   "}, "query"),
        ({}, "query"),
        ({"query": "x" * 10_000}, "1000"),
        ({"query": "x", "graph_scope": "everything"}, "world"),
    ],
)
def test_search_bad_input_is_a_clear_400(alice_client, params, fragment) -> None:  # type: ignore[no-untyped-def]
    response = alice_client.get("/api/v1/entities/search", params)
    assert response.status_code == 400
    assert fragment in response.json()["error"]["message"]


@pytest.mark.parametrize("text", ["') RETURN 1 //", "`n`) DETACH DELETE n //", "$param", "%00", "\x00abc"])
def test_search_cypher_looking_text_is_normal(alice, alice_client, write_doc, text) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Q", scope=Scope.PRIVATE)
    write_doc(graph, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES)
    response = alice_client.get("/api/v1/entities/search", {"query": text})
    assert response.status_code in (200, 400)
    graph.refresh_from_db()
    assert graph.entity_count == 4


def test_search_isolation(alice, charlie_client, write_doc) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Secret", scope=Scope.PRIVATE)
    write_doc(graph, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES)
    assert charlie_client.get("/api/v1/entities/search", {"query": "qubit"}).json()["results"] == []
    world = charlie_client.get("/api/v1/entities/search", {"query": "qubit", "graph_scope": "world"})
    assert world.json()["results"] == []
    foreign = charlie_client.get("/api/v1/entities/search", {"query": "qubit", "graph_id": graph.id})
    missing = charlie_client.get("/api/v1/entities/search", {"query": "qubit", "graph_id": "graph_nope"})
    assert foreign.status_code == missing.status_code == 404


def test_world_entity_contract_and_records(alice, bob, bob_client, charlie_client, write_doc) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="W", scope=Scope.WORLD)
    write_doc(graph, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES, relations=QUANTUM_RELATIONS)
    response = bob_client.get("/api/v1/world/entities/Quantum Computing/", {"evidence": "true"})
    assert response.status_code == 200
    body = response.json()
    assert body["entity"]["name"] == "Quantum computing" and body["count"] == 2
    related = body["related"][0]
    assert set(related) >= {"id", "name", "type", "relationship", "direction", "strength", "sources", "evidence"}
    assert related["sources"] == ["paper.pdf"] and related["evidence"][0]["document"] == "paper.pdf"
    assert WorldUsage.objects.get(querier=bob).contributor_ids == [alice.pk]
    no_evidence = bob_client.get("/api/v1/world/entities/quantum%20computing/").json()
    assert "evidence" not in no_evidence["related"][0]
    missing = charlie_client.get("/api/v1/world/entities/quantum computer science/")
    assert missing.status_code == 404 and isinstance(missing.json()["error"]["suggestions"], list)
    assert charlie_client.get("/api/v1/world/entities/qubit/", {"limit": 101}).status_code == 400
    assert charlie_client.get("/api/v1/world/entities/qubit/", {"limit": 0}).status_code == 400


def test_private_knowledge_never_reaches_the_world_graph(alice, charlie_client, write_doc) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Secret", scope=Scope.PRIVATE)
    write_doc(graph, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES)
    assert charlie_client.get("/api/v1/world/entities/qubit/").status_code == 404


@pytest.mark.parametrize(
    "path",
    ["/api/v1/graphs/", "/api/v1/graphs/world/", "/api/v1/entities/search?query=x", "/api/v1/world/entities/x/"],
)
def test_endpoints_need_a_key(anon_client, path) -> None:  # type: ignore[no-untyped-def]
    assert anon_client.get(path).status_code == 401


def test_graph_store_down_is_503(alice, alice_client, settings, tmp_path) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Q", scope=Scope.PRIVATE)
    live = settings.FALKORDB_URL
    settings.FALKORDB_URL = f"unix://{tmp_path}/dead.sock"
    falkor._clients.clear()
    try:
        for response in (
            alice_client.get("/api/v1/entities/search", {"query": "qubit"}),
            alice_client.get("/api/v1/entities/search", {"query": "qubit", "graph_id": graph.id}),
            alice_client.get("/api/v1/world/entities/qubit/"),
            alice_client.post("/api/v1/graphs/", {"name": "New"}, format="json"),
        ):
            assert response.status_code == 503
            assert "graph store" in response.json()["error"]["message"]
    finally:
        settings.FALKORDB_URL = live
        falkor._clients.clear()


def test_contributor_never_sees_what_another_account_searched(  # type: ignore[no-untyped-def]
    alice, alice_client, bob_client, client, write_doc, django_capture_on_commit_callbacks
) -> None:
    from io import StringIO

    from django.core.management import call_command

    graph = graph_create(actor=alice, name="W", scope=Scope.WORLD)
    write_doc(graph, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES, relations=QUANTUM_RELATIONS)
    secret = "qubit zanzibar-7731 merger plans"
    with django_capture_on_commit_callbacks(execute=True):
        found = bob_client.get("/api/v1/entities/search", {"query": secret, "graph_scope": "world"})
        looked_up = bob_client.get("/api/v1/world/entities/Quantum Computing/")
    assert found.status_code == 200 and found.json()["results"]
    assert looked_up.status_code == 200
    ledger = alice_client.get("/api/v1/billing/ledger")
    assert ledger.status_code == 200
    earned = [e for e in ledger.json()["results"] if e["kind"] == "earning"]
    assert len(earned) == 2 and {e["reference"] for e in earned} == {"world knowledge used"}
    assert "zanzibar" not in ledger.content.decode().lower()
    assert "quantum computing" not in ledger.content.decode().lower()
    client.force_login(alice)
    page = client.get("/billing/")
    assert page.status_code == 200 and "world knowledge used" in page.content.decode()
    assert "zanzibar" not in page.content.decode().lower()
    dump = StringIO()
    call_command("dumpdata", stdout=dump)
    assert "zanzibar" not in dump.getvalue().lower()
    assert "quantum computing" not in dump.getvalue().lower()  # the world-entity lookup's text


# The merge report (issue 25 §2): two documents naming one board in different surface forms.
HARBOUR_A = ["The Harbour Board met in Kestrel Bay; the Harbour Board's minutes name Ada Penhallow."]
HARBOUR_B = ["Minutes of the harbour board: Ada Penhallow chaired it."]
HARBOUR_NAMES_A = [
    ("the Harbour Board", "ORGANIZATION"),
    ("Harbour Board's", "ORGANIZATION"),
    ("Ada Penhallow", "PERSON"),
]
HARBOUR_NAMES_B = [("the harbour board", "ORGANIZATION"), ("Ada Penhallow", "PERSON")]


def _harbour_graph(owner, write_resolved, scope=Scope.PRIVATE) -> tuple[Graph, str, str]:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=owner, name="Harbour", scope=scope)
    first = write_resolved(graph, owner, texts=HARBOUR_A, names=HARBOUR_NAMES_A)
    second = write_resolved(graph, owner, texts=HARBOUR_B, names=HARBOUR_NAMES_B)
    return graph, first, second


def test_merges_report_shows_the_owner_each_documents_forms_free(alice, alice_client, fund, write_resolved) -> None:  # type: ignore[no-untyped-def]
    from billing.models import CreditAccount

    graph, first, second = _harbour_graph(alice, write_resolved)
    fund(alice, 10)
    balance = CreditAccount.objects.get(user=alice).balance
    response = alice_client.get(f"/api/v1/graphs/{graph.id}/merges/")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["graph_id"] == graph.id and body["graph_name"] == "Harbour"
    assert (body["limit"], body["offset"], body["more_merged"], body["more_split"]) == (100, 0, False, False)
    # Within a document the article and the possessive fold (extraction.resolve), across documents the case.
    [board] = [row for row in body["merged"] if "harbour board" in row["name"].casefold()]
    assert board["type"] == "organization"
    assert {"the Harbour Board", "Harbour Board's", "the harbour board"} <= {board["name"], *board["forms"]}
    per_document = {doc["document_id"]: set(doc["forms"]) for doc in board["documents"]}
    assert per_document[first] >= {"the Harbour Board", "Harbour Board's"}
    assert per_document[second] >= {"the harbour board"}  # as written, beside the name without its article
    assert all(row["name"] != "Ada Penhallow" for row in body["merged"])  # one form: nothing merged
    assert CreditAccount.objects.get(user=alice).balance == balance  # a read of your own graph costs nothing
    assert "RateLimit-Remaining" in response  # counted by the account's rate limit like every API read


def test_merges_report_pages_with_offset_and_limit(alice, alice_client, write_resolved) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Ports", scope=Scope.PRIVATE)
    write_resolved(graph, alice, texts=["The Pilot Station's boats left the Quay's end."],
                   names=[("Pilot Station", "ORGANIZATION"), ("Pilot Station's", "ORGANIZATION"),
                          ("Quay", "LOCATION"), ("Quay's", "LOCATION")])  # fmt: skip
    first = alice_client.get(f"/api/v1/graphs/{graph.id}/merges/", {"limit": 1}).json()
    second = alice_client.get(f"/api/v1/graphs/{graph.id}/merges/", {"limit": 1, "offset": 1}).json()
    assert len(first["merged"]) == len(second["merged"]) == 1 and first["more_merged"] and not second["more_merged"]
    assert {first["merged"][0]["name"], second["merged"][0]["name"]} == {"Pilot Station", "Quay"}


@pytest.mark.parametrize(
    ("params", "field"),
    [({"limit": 0}, "limit"), ({"limit": 501}, "limit"), ({"limit": "ten"}, "limit"), ({"offset": -1}, "offset")],
)
def test_merges_report_bad_limit_or_offset_is_a_400_naming_the_range(alice, alice_client, params, field) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Harbour", scope=Scope.PRIVATE)
    response = alice_client.get(f"/api/v1/graphs/{graph.id}/merges/", params)
    assert response.status_code == 400
    error = response.json()["error"]
    assert field in error["fields"] and field in error["message"]
    if field == "limit" and params["limit"] != "ten":
        assert "between 1 and 500" in error["message"]


def test_merges_report_of_another_account_is_404_or_403_when_shared(  # type: ignore[no-untyped-def]
    alice, bob, charlie, charlie_client, write_resolved
) -> None:
    private, _, _ = _harbour_graph(alice, write_resolved)
    own, _, _ = _harbour_graph(charlie, write_resolved)  # charlie has merges of his own
    assert charlie_client.get(f"/api/v1/graphs/{own.id}/merges/").json()["merged"]
    foreign = charlie_client.get(f"/api/v1/graphs/{private.id}/merges/")
    missing = charlie_client.get("/api/v1/graphs/graph_doesnotexist/merges/")
    assert foreign.status_code == missing.status_code == 404
    assert foreign.json()["error"]["code"] == missing.json()["error"]["code"] == "graph_not_found"
    assert "Harbour" not in foreign.content.decode()
    shared = graph_create(actor=bob, name="Shared harbour", scope=Scope.WORLD)
    refused = charlie_client.get(f"/api/v1/graphs/{shared.id}/merges/")
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "graph_not_owned"
    assert charlie_client.get("/api/v1/graphs/world/merges/").status_code == 403


def test_merges_report_is_in_the_openapi_schema(alice_client) -> None:  # type: ignore[no-untyped-def]
    schema = alice_client.get("/api/v1/schema/", HTTP_ACCEPT="application/json").json()
    operation = schema["paths"]["/api/v1/graphs/{graph_id}/merges/"]["get"]
    assert operation["operationId"] == "graphs_merges"
    assert {p["name"] for p in operation["parameters"]} >= {"graph_id", "limit", "offset"}
    assert {"200", "400", "403", "404"} <= set(operation["responses"])
