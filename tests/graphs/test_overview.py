"""GET /api/v1/graphs/{id}/overview/: the explorer's overview (issue 27 §2), the most connected entities of a graph
or of one of the user's documents in it, with the relations among them; and the explorer page that draws it."""

from __future__ import annotations

import pytest

from exograph.core.scope import Scope
from exograph.documents.models import Document, DocumentStatus
from exograph.graphs import store
from exograph.graphs.services import graph_create
from tests.graphs.conftest import QUANTUM_ENTITIES, QUANTUM_RELATIONS, QUANTUM_TEXTS

pytestmark = pytest.mark.django_db

PEOPLE_TEXTS = ["Marie Curie worked in Paris at the Sorbonne.", "Pierre Curie worked with Marie Curie in Paris."]
PEOPLE_ENTITIES = [
    ("Marie Curie", "PERSON", ""),
    ("Pierre Curie", "PERSON", ""),
    ("Paris", "LOCATION", ""),
    ("Sorbonne", "ORGANIZATION", ""),
]
PEOPLE_RELATIONS = [
    ("Marie Curie", "worked_at", "Sorbonne"),
    ("Marie Curie", "lived_in", "Paris"),
    ("Pierre Curie", "worked_with", "Marie Curie"),
]


def _document(owner, graph, filename: str) -> Document:  # type: ignore[no-untyped-def]
    return Document.objects.create(
        owner=owner, graph=graph, filename=filename, size=100, content_type="pdf", pages=2,
        status=DocumentStatus.PROCESSED, sha256=filename,
    )  # fmt: skip


@pytest.fixture
def two_docs(alice, write_doc):  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Mixed", scope=Scope.PRIVATE)
    quantum = _document(alice, graph, "quantum.pdf")
    people = _document(alice, graph, "people.pdf")
    write_doc(graph, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES, relations=QUANTUM_RELATIONS,
              filename="quantum.pdf", document_id=str(quantum.id))  # fmt: skip
    write_doc(graph, alice, texts=PEOPLE_TEXTS, entities=PEOPLE_ENTITIES, relations=PEOPLE_RELATIONS,
              filename="people.pdf", document_id=str(people.id))  # fmt: skip
    return graph, quantum, people


def _degrees(graph) -> dict[str, int]:  # type: ignore[no-untyped-def]
    rows = store.ro_query(graph.store_name, "MATCH (e:Entity) RETURN e.id")
    return store.store_entity_degrees(graph.store_name, [r[0] for r in rows])


def test_overview_draws_the_most_connected_entities_and_the_relations_among_them(alice_client, two_docs) -> None:  # type: ignore[no-untyped-def]
    graph, _, _ = two_docs
    degrees = _degrees(graph)
    body = alice_client.get(f"/api/v1/graphs/{graph.id}/overview/").json()
    assert body["total"] == len(degrees) >= 8 and len(body["nodes"]) == len(degrees)
    shown = [n["degree"] for n in body["nodes"]]
    assert shown == sorted(shown, reverse=True) and {n["id"]: n["degree"] for n in body["nodes"]} == degrees
    names = {n["id"]: n["name"] for n in body["nodes"]}
    pairs = {(names[e["source"]], e["type"], names[e["target"]]) for e in body["edges"]}
    assert ("Marie Curie", "worked_at", "Sorbonne") in pairs and ("Quantum computing", "uses", "Qubit") in pairs
    # The top 2 only: the two best connected, and only the relations between those two.
    top = alice_client.get(f"/api/v1/graphs/{graph.id}/overview/", {"limit": 2}).json()
    best = sorted(degrees.values(), reverse=True)[:2]
    assert [n["degree"] for n in top["nodes"]] == best and top["total"] == len(degrees) and top["limit"] == 2
    ids = {n["id"] for n in top["nodes"]}
    assert all(e["source"] in ids and e["target"] in ids for e in top["edges"])


def test_overview_of_one_document_holds_only_its_entities(alice_client, two_docs) -> None:  # type: ignore[no-untyped-def]
    graph, quantum, people = two_docs
    body = alice_client.get(f"/api/v1/graphs/{graph.id}/overview/", {"document_id": str(people.id)}).json()
    assert body["document_id"] == str(people.id)
    assert {n["name"] for n in body["nodes"]} == {name for name, _, _ in PEOPLE_ENTITIES}
    assert body["total"] == len(PEOPLE_ENTITIES)
    other = alice_client.get(f"/api/v1/graphs/{graph.id}/overview/", {"document_id": str(quantum.id)}).json()
    assert "Marie Curie" not in {n["name"] for n in other["nodes"]} and "Qubit" in {n["name"] for n in other["nodes"]}


def test_overview_is_owner_scoped_and_bounded(alice, alice_client, charlie, charlie_client, two_docs) -> None:  # type: ignore[no-untyped-def]
    graph, _, people = two_docs
    assert charlie_client.get(f"/api/v1/graphs/{graph.id}/overview/").status_code == 404
    theirs = graph_create(actor=charlie, name="Charlie's", scope=Scope.PRIVATE)
    foreign = _document(charlie, theirs, "c.pdf")
    response = alice_client.get(f"/api/v1/graphs/{graph.id}/overview/", {"document_id": str(foreign.id)})
    assert response.status_code == 404 and response.json()["error"]["code"] == "document_not_found"
    # Her own document, but of another graph: not this graph's.
    elsewhere = graph_create(actor=alice, name="Elsewhere", scope=Scope.PRIVATE)
    response = alice_client.get(f"/api/v1/graphs/{elsewhere.id}/overview/", {"document_id": str(people.id)})
    assert response.status_code == 404
    for limit in (0, 2001):
        response = alice_client.get(f"/api/v1/graphs/{graph.id}/overview/", {"limit": limit})
        assert response.status_code == 400 and "limit" in response.content.decode()
    assert alice_client.get(f"/api/v1/graphs/{graph.id}/overview/", {"document_id": "nope"}).status_code == 404


def test_explorer_page_offers_the_overview_and_the_graphs_documents(client, alice, two_docs) -> None:  # type: ignore[no-untyped-def]
    graph, quantum, people = two_docs
    client.force_login(alice)
    html = client.get(f"/graphs/{graph.id}/explore/").content.decode()
    assert f'data-overview="/api/v1/graphs/{graph.id}/overview/"' in html
    assert f'<option value="{quantum.id}">quantum.pdf</option>' in html
    assert f'<option value="{people.id}">people.pdf</option>' in html
    assert "vendor/cytoscape-fcose/cytoscape-fcose.js" in html and 'id="overview-list"' in html
