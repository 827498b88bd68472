"""POST /api/v1/retrieve/: evidence without an answer (what ExoGraphRetriever reads), free, cited, scoped."""

from __future__ import annotations

import pytest

from billing.models import CreditEntry, EntryKind, WorldUsage
from billing.services import credit_balance
from exograph.core.scope import Scope
from exograph.graphs.services import graph_create
from tests.graphs.conftest import QUANTUM_ENTITIES, QUANTUM_RELATIONS, QUANTUM_TEXTS

pytestmark = pytest.mark.django_db

RETRIEVE = "/api/v1/retrieve/"


@pytest.fixture
def alice_graph(alice, write_doc):  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Quantum notes", scope=Scope.PRIVATE)
    write_doc(
        graph, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES, relations=QUANTUM_RELATIONS, filename="q.pdf"
    )
    return graph


@pytest.mark.parametrize("mode", ["rag", "graph"])
def test_evidence_comes_back_cited_numbered_and_free(alice, alice_client, alice_graph, mode):  # type: ignore[no-untyped-def]
    balance = credit_balance(account=alice)
    response = alice_client.post(
        RETRIEVE, {"question": "How are qubits shielded from noise?", "mode": mode, "top_k": 5}, format="json"
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["mode"] == mode and 0 < body["count"] == len(body["items"]) <= 5
    assert [item["n"] for item in body["items"]] == list(range(1, body["count"] + 1))
    passages = [item for item in body["items"] if item["kind"] == "passage"]
    assert any("error correction" in item["text"].lower() for item in passages)
    assert all(item["graph_id"] == alice_graph.id and item["origin"] == "private" for item in passages)
    assert all(item["chunk_id"] and item["document_id"] and item["source"] == "q.pdf" for item in passages)
    assert credit_balance(account=alice) == balance
    assert not CreditEntry.objects.filter(account__user=alice, kind__in=[EntryKind.CHARGE, EntryKind.HOLD]).exists()


def test_another_account_finds_only_its_own(alice_graph, charlie, charlie_client, write_doc):  # type: ignore[no-untyped-def]
    mine = graph_create(actor=charlie, name="Charlie's lab", scope=Scope.PRIVATE)
    write_doc(mine, charlie, texts=["Charlie's lab stores qubits as trapped ions cooled by lasers."], entities=[])
    body = charlie_client.post(RETRIEVE, {"question": "How are qubits kept from noise?"}, format="json").json()
    assert body["count"] >= 1 and {item["graph_id"] for item in body["items"]} == {mine.id}
    refused = charlie_client.post(RETRIEVE, {"question": "qubits", "graph_id": alice_graph.id}, format="json")
    assert refused.status_code == 404


def test_world_items_pay_their_contributors_without_keeping_the_question(alice, charlie, charlie_client, write_doc):  # type: ignore[no-untyped-def]
    shared = graph_create(actor=alice, name="Shared quantum", scope=Scope.WORLD)
    write_doc(shared, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES, relations=QUANTUM_RELATIONS)
    question = "How are qubits shielded from noise?"
    body = charlie_client.post(RETRIEVE, {"question": question, "graph_scope": "world"}, format="json").json()
    assert any(item["origin"] == "world" for item in body["items"])
    usage = WorldUsage.objects.get(querier=charlie)
    assert usage.contributor_ids == [alice.pk] and usage.source == "search"
    assert question not in str(WorldUsage.objects.values().get(pk=usage.pk))


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        ({"question": "qubits", "mode": "web"}, "invalid_mode"),
        ({"question": "   "}, "invalid"),
        ({"question": "qubits", "top_k": 31}, "invalid"),
        ({}, "invalid"),
    ],
)
def test_bad_input_is_a_400_that_names_the_fix(alice_client, payload, code):  # type: ignore[no-untyped-def]
    response = alice_client.post(RETRIEVE, payload, format="json")
    assert response.status_code == 400, response.json()
    error = response.json()["error"]
    assert error["code"].startswith(code) and error["message"]


def test_evidence_from_the_askers_own_world_graph_is_labelled_world(alice, alice_client, write_doc):  # type: ignore[no-untyped-def]
    """A document Alice shared in her world-scope graph is world evidence for her too, not "private"."""
    shared = graph_create(actor=alice, name="My shared quantum notes", scope=Scope.WORLD)
    write_doc(shared, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES, relations=QUANTUM_RELATIONS)
    payload = {"question": "How are qubits shielded from noise?", "graph_id": shared.id, "mode": "rag"}
    body = alice_client.post(RETRIEVE, payload, format="json").json()
    assert body["count"] >= 1 and {item["graph_id"] for item in body["items"]} == {shared.id}
    assert {item["origin"] for item in body["items"]} == {"world"}


@pytest.mark.parametrize("mode", ["rag", "graph"])
def test_a_shared_document_read_in_two_world_graphs_is_one_passage_each(alice, alice_client, write_doc, mode):  # type: ignore[no-untyped-def]
    """A world upload lands in its owner's world graph and in the World Graph under the same chunk ids: a world
    question gets each passage once, so the top_k slots hold different passages."""
    from exograph.graphs.services import world_graph

    shared = graph_create(actor=alice, name="My shared quantum notes", scope=Scope.WORLD)
    for graph in (shared, world_graph()):
        write_doc(graph, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES, document_id="doc_shared_q")
    payload = {"question": "How are qubits shielded from noise?", "graph_scope": "world", "mode": mode, "top_k": 10}
    body = alice_client.post(RETRIEVE, payload, format="json").json()
    chunks = [item["chunk_id"] for item in body["items"] if item["kind"] == "passage"]
    assert chunks and len(chunks) == len(set(chunks)), chunks
    assert set(chunks) <= {"doc_shared_q:0", "doc_shared_q:1"}
