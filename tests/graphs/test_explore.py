"""GET /api/v1/graphs/{id}/explore/: a bounded, scope-checked neighbourhood for the graph explorer."""

from __future__ import annotations

import pytest

from exograph.core.scope import Scope
from exograph.graphs.services import graph_create
from tests.graphs.conftest import QUANTUM_ENTITIES, QUANTUM_RELATIONS, QUANTUM_TEXTS

pytestmark = pytest.mark.django_db


@pytest.fixture
def quantum(alice, write_doc):  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Quantum", scope=Scope.PRIVATE)
    doc = write_doc(
        graph, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES, relations=QUANTUM_RELATIONS, filename="q.pdf"
    )
    return graph, doc


def test_explore_returns_typed_edges_with_strength_degree_and_provenance(alice_client, quantum) -> None:  # type: ignore[no-untyped-def]
    graph, doc = quantum
    response = alice_client.get(f"/api/v1/graphs/{graph.id}/explore/", {"entity": "qubit", "hops": 1})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["entity"]["name"] == "Qubit" and body["entity"]["hop"] == 0 and body["entity"]["expanded"]
    assert body["edges"], body
    names = {n["id"]: n["name"] for n in body["nodes"]}
    for edge in body["edges"]:
        assert edge["source"] in names and edge["target"] in names
        assert edge["type"] and edge["strength"] >= 1
        assert edge["sources"] == [{"document_id": doc, "filename": "q.pdf", "view_url": None}]  # no Document row
    assert body["entity"]["degree"] == len(body["edges"]) and body["entity"]["more"] == 0
    assert {"document_id": doc, "filename": "q.pdf", "view_url": None} in body["sources"]
    assert body["passages"] and body["passages"][0]["filename"] == "q.pdf" and body["passages"][0]["page"] >= 1


def test_explore_caps_relations_per_node_and_counts_the_rest(alice_client, quantum) -> None:  # type: ignore[no-untyped-def]
    graph, _ = quantum
    full = alice_client.get(f"/api/v1/graphs/{graph.id}/explore/", {"entity": "qubit"}).json()
    degree = full["entity"]["degree"]
    assert degree >= 2
    capped = alice_client.get(f"/api/v1/graphs/{graph.id}/explore/", {"entity": "qubit", "limit": 1}).json()
    assert len(capped["edges"]) == 1
    assert capped["entity"]["more"] == degree - 1
    unexpanded = [n for n in capped["nodes"] if not n["expanded"]]
    assert all(n["more"] == n["degree"] for n in unexpanded)


def test_explore_of_a_foreign_private_graph_is_404(charlie_client, quantum) -> None:  # type: ignore[no-untyped-def]
    graph, _ = quantum
    response = charlie_client.get(f"/api/v1/graphs/{graph.id}/explore/", {"entity": "qubit"})
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "graph_not_found"


@pytest.mark.parametrize(("params", "fragment"), [({"entity": "qubit", "hops": 4}, "hops"), ({}, "entity")])
def test_explore_bad_arguments_are_400_naming_the_fix(alice_client, quantum, params, fragment) -> None:  # type: ignore[no-untyped-def]
    graph, _ = quantum
    response = alice_client.get(f"/api/v1/graphs/{graph.id}/explore/", params)
    assert response.status_code == 400
    assert fragment in response.content.decode()


def test_explore_unknown_entity_is_404(alice_client, quantum) -> None:  # type: ignore[no-untyped-def]
    graph, _ = quantum
    response = alice_client.get(f"/api/v1/graphs/{graph.id}/explore/", {"entity": "zzzz nothing like it"})
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "entity_not_found"


def test_explore_is_in_the_openapi_schema(alice_client) -> None:  # type: ignore[no-untyped-def]
    schema = alice_client.get("/api/v1/schema/", HTTP_ACCEPT="application/json").json()
    assert "/api/v1/graphs/{graph_id}/explore/" in schema["paths"]


@pytest.mark.parametrize("read", ["explore", "world"])
@pytest.mark.parametrize(("entity", "code"), [(" \x00 ", "empty_entity"), ("x" * 301, "entity_too_long")])
def test_explorer_and_world_reads_check_the_entity_name_alike(alice, quantum, read, entity, code) -> None:  # type: ignore[no-untyped-def]
    from exograph.core.errors import ValidationError
    from exograph.graphs.selectors import graph_explore, world_entity_read

    graph, _ = quantum
    with pytest.raises(ValidationError) as exc:
        if read == "explore":
            graph_explore(user=alice, graph_id=graph.id, entity=entity)
        else:
            world_entity_read(user=alice, entity=entity)
    assert exc.value.code == code
    assert exc.value.message.startswith("entity is" if read == "explore" else "entity_id is")
    assert exc.value.hint


def test_explore_unknown_entity_names_the_graph_and_suggests_its_closest_names(alice, quantum) -> None:  # type: ignore[no-untyped-def]
    from exograph.core.errors import NotFound
    from exograph.graphs.selectors import graph_explore

    graph, _ = quantum
    with pytest.raises(NotFound) as exc:
        graph_explore(user=alice, graph_id=graph.id, entity="qubits of light")
    assert exc.value.code == "entity_not_found" and graph.id in exc.value.message
    assert "Qubit" in exc.value.extra["suggestions"] and exc.value.hint.startswith("Did you mean: ")
