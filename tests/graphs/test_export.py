"""GET /api/v1/graphs/{id}/export/?format=graphml|jsonl|csv|jsonld: a streamed, owner-only export read back with
networkx (GraphML), rdflib (JSON-LD), json and csv; the World Graph exports only the caller's contributions."""

from __future__ import annotations

import csv
import io
import json

import networkx as nx
import pytest
import rdflib

from exograph.core.scope import Scope
from exograph.graphs import export as graph_export_module
from exograph.graphs import store
from exograph.graphs.services import graph_create
from tests.graphs.conftest import QUANTUM_ENTITIES, QUANTUM_RELATIONS, QUANTUM_TEXTS

pytestmark = pytest.mark.django_db

VOCAB = rdflib.Namespace(graph_export_module.VOCAB)


@pytest.fixture
def quantum(alice, write_doc):  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Quantum", scope=Scope.PRIVATE)
    doc = write_doc(
        graph, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES, relations=QUANTUM_RELATIONS, filename="q.pdf"
    )
    return graph, doc


def body_of(response) -> str:  # type: ignore[no-untyped-def]
    assert response.status_code == 200, response.content
    assert response.streaming
    return b"".join(response.streaming_content).decode("utf-8")


def exported(client, graph_id: str, fmt: str) -> str:  # type: ignore[no-untyped-def]
    return body_of(client.get(f"/api/v1/graphs/{graph_id}/export/", {"format": fmt}))


def test_graphml_reads_back_in_networkx_with_typed_edges_and_provenance(alice_client, quantum) -> None:  # type: ignore[no-untyped-def]
    graph, doc = quantum
    response = alice_client.get(f"/api/v1/graphs/{graph.id}/export/", {"format": "graphml"})
    assert response["Content-Type"].startswith("application/graphml+xml")
    assert f'filename="{graph.id}.graphml"' in response["Content-Disposition"]
    text = body_of(response)
    assert "embedding" not in text and "vkey" not in text
    g = nx.read_graphml(io.BytesIO(text.encode()))
    assert g.is_directed()
    names = {data["name"]: (node, data) for node, data in g.nodes(data=True)}
    assert set(names) == {name for name, _, _ in QUANTUM_ENTITIES}
    assert names["Qubit"][1]["type"] == "concept" and names["Qubit"][1]["document_ids"] == doc
    edges = {(g.nodes[a]["name"], d["type"], g.nodes[b]["name"]): d for a, b, d in g.edges(data=True)}
    assert set(edges) == {("Quantum computing", "USES", "Qubit"), ("Quantum error correction", "PROTECTS", "Qubit"),
                          ("Quantum computing", "RUNS", "Shor's algorithm")}  # fmt: skip
    uses = edges[("Quantum computing", "USES", "Qubit")]
    assert uses["strength"] >= 1 and uses["document_ids"] == doc
    assert uses["chunk_ids"] == f"{doc}:0" and uses["pages"] == "1"  # the chunk naming both, on page 1


def test_jsonld_reads_back_in_rdflib(alice_client, quantum) -> None:  # type: ignore[no-untyped-def]
    graph, doc = quantum
    text = exported(alice_client, graph.id, "jsonld")
    rdf = rdflib.Graph().parse(data=text, format="json-ld")
    entities = set(rdf.subjects(rdflib.RDF.type, VOCAB.Entity))
    assert {str(rdf.value(e, VOCAB.name)) for e in entities} == {name for name, _, _ in QUANTUM_ENTITIES}
    relations = set(rdf.subjects(rdflib.RDF.type, VOCAB.Relation))
    assert len(relations) == len(QUANTUM_RELATIONS)
    triples = {
        (
            str(rdf.value(rdf.value(r, VOCAB.source), VOCAB.name)),
            str(rdf.value(r, VOCAB.relationType)),
            str(rdf.value(rdf.value(r, VOCAB.target), VOCAB.name)),
        )
        for r in relations
    }
    assert ("Quantum computing", "USES", "Qubit") in triples
    documents = set(rdf.subjects(rdflib.RDF.type, VOCAB.Document))
    assert [str(rdf.value(d, VOCAB.filename)) for d in documents] == ["q.pdf"]
    assert all(rdf.value(r, VOCAB.document) in documents for r in relations)
    assert all(rdf.value(r, VOCAB.evidenceChunk) is not None for r in relations)


def test_jsonl_has_entities_relations_with_pages_and_passages_but_no_embeddings(alice_client, quantum) -> None:  # type: ignore[no-untyped-def]
    graph, doc = quantum
    records = [json.loads(line) for line in exported(alice_client, graph.id, "jsonl").splitlines()]
    kinds = [r["record"] for r in records]
    assert kinds[0] == "graph" and records[0]["graph_id"] == graph.id and records[0]["contributions_of"] is None
    assert kinds.count("document") == 1 and kinds.count("entity") == len(QUANTUM_ENTITIES)
    assert kinds.count("relation") == len(QUANTUM_RELATIONS)
    passages = [r for r in records if r["record"] == "passage"]
    assert [(p["chunk_id"], p["page"], p["text"]) for p in passages] == [
        (f"{doc}:{i}", i + 1, text) for i, text in enumerate(QUANTUM_TEXTS)
    ]
    relation = next(r for r in records if r["record"] == "relation" and r["type"] == "PROTECTS")
    assert relation["evidence"] == [{"chunk_id": f"{doc}:1", "document_id": doc, "page": 2}]
    assert not [r for r in records if {"embedding", "vkey", "doc_vkeys"} & set(r)]


def test_csv_has_one_row_per_document_entity_and_relation(alice_client, quantum) -> None:  # type: ignore[no-untyped-def]
    graph, doc = quantum
    rows = list(csv.DictReader(io.StringIO(exported(alice_client, graph.id, "csv"))))
    assert [r["record"] for r in rows].count("entity") == len(QUANTUM_ENTITIES)
    ids = {r["id"]: r["name"] for r in rows if r["record"] == "entity"}
    relations = {(ids[r["source"]], r["type"], ids[r["target"]]) for r in rows if r["record"] == "relation"}
    assert ("Quantum computing", "RUNS", "Shor's algorithm") in relations and len(relations) == 3
    assert [r["filename"] for r in rows if r["record"] == "document"] == ["q.pdf"]


def test_export_pages_through_the_store(alice_client, alice, write_doc, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Pages of 2 nodes: every entity and relation still comes out once (the id cursor moves on)."""
    monkeypatch.setattr(graph_export_module, "EXPORT_PAGE", 2)
    graph = graph_create(actor=alice, name="Chain", scope=Scope.PRIVATE)
    names = [f"Station {chr(65 + i)}" for i in range(7)]
    write_doc(
        graph,
        alice,
        texts=[" ".join(names)],
        entities=[(n, "place", "") for n in names],
        relations=[(a, "links", b) for a, b in zip(names, names[1:], strict=False)],
    )
    g = nx.read_graphml(io.StringIO(exported(alice_client, graph.id, "graphml")))
    assert sorted(d["name"] for _, d in g.nodes(data=True)) == names
    assert g.number_of_edges() == len(names) - 1


@pytest.mark.parametrize("fmt", [None, "xml", "GraphML2"])
def test_bad_format_is_400_naming_the_accepted_ones(alice_client, quantum, fmt) -> None:  # type: ignore[no-untyped-def]
    graph, _ = quantum
    response = alice_client.get(f"/api/v1/graphs/{graph.id}/export/", {"format": fmt} if fmt else {})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid_export_format"
    assert all(name in error["message"] for name in ("graphml", "jsonl", "csv", "jsonld"))


def test_another_accounts_private_graph_is_404(charlie_client, quantum) -> None:  # type: ignore[no-untyped-def]
    graph, _ = quantum
    response = charlie_client.get(f"/api/v1/graphs/{graph.id}/export/", {"format": "jsonl"})
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "graph_not_found"


def test_another_accounts_shared_graph_is_403(bob, alice_client, write_doc) -> None:  # type: ignore[no-untyped-def]
    shared = graph_create(actor=bob, name="Bob shares", scope=Scope.WORLD)
    response = alice_client.get(f"/api/v1/graphs/{shared.id}/export/", {"format": "jsonl"})
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "graph_export_forbidden"


def test_world_graph_exports_only_the_callers_contributions(alice, bob, alice_client, write_doc) -> None:  # type: ignore[no-untyped-def]
    mine = graph_create(actor=alice, name="Alice world", scope=Scope.WORLD)
    theirs = graph_create(actor=bob, name="Bob world", scope=Scope.WORLD)
    alice_doc = write_doc(
        mine,
        alice,
        texts=["Ada Lovelace wrote about the Analytical Engine."],
        entities=[("Ada Lovelace", "person", "Alice's note"), ("Analytical Engine", "machine", "")],
        relations=[("Ada Lovelace", "wrote about", "Analytical Engine")],
        filename="alice.pdf",
    )
    bob_doc = write_doc(
        theirs,
        bob,
        texts=["Charles Babbage designed the Analytical Engine."],
        entities=[("Charles Babbage", "person", "Bob's secret note"), ("Analytical Engine", "machine", "Bob's text")],
        relations=[("Charles Babbage", "designed", "Analytical Engine")],
        filename="bob.pdf",
    )
    response = alice_client.get("/api/v1/graphs/world/export/", {"format": "jsonl"})
    assert response["X-Export-Scope"] == "contributions"
    text = body_of(response)
    records = [json.loads(line) for line in text.splitlines()]
    assert records[0]["contributions_of"] == alice.pk
    assert [r["filename"] for r in records if r["record"] == "document"] == ["alice.pdf"]
    entities = {r["name"]: r for r in records if r["record"] == "entity"}
    assert set(entities) == {"Ada Lovelace", "Analytical Engine"}
    assert entities["Analytical Engine"]["document_ids"] == [alice_doc]  # shared with Bob: only her document
    assert [r["type"] for r in records if r["record"] == "relation"] == ["WROTE_ABOUT"]
    assert {r["document_id"] for r in records if r["record"] == "passage"} == {alice_doc}
    assert bob_doc not in text and "Babbage" not in text and "Bob's" not in text


def test_export_is_in_the_openapi_schema(alice_client) -> None:  # type: ignore[no-untyped-def]
    schema = alice_client.get("/api/v1/schema/", HTTP_ACCEPT="application/json").json()
    operation = schema["paths"]["/api/v1/graphs/{graph_id}/export/"]["get"]
    assert {p["name"] for p in operation["parameters"]} >= {"format", "graph_id"}
    assert "application/graphml+xml" in operation["responses"]["200"]["content"]


def test_a_store_that_is_down_is_a_503_envelope_before_any_byte_streams(alice_client, quantum, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    graph, _ = quantum

    def down(store_name: str) -> None:
        raise store.StoreUnavailable(store.STORE_DOWN, code="graph_store_unavailable")

    monkeypatch.setattr(store, "store_counts", down)
    response = alice_client.get(f"/api/v1/graphs/{graph.id}/export/", {"format": "graphml"})
    assert response.status_code == 503 and not response.streaming
    assert response.json()["error"]["code"] == "graph_store_unavailable"
