"""Chat REST: sessions, send_chat_message with the extractive model, metering, bad input, isolation."""

from __future__ import annotations

import pytest

from billing.models import WorldUsage
from billing.services import credit_balance
from exograph.chat.models import ChatMessage, ChatSession
from exograph.core.scope import Scope
from exograph.graphs.services import graph_create
from tests.graphs.conftest import QUANTUM_ENTITIES, QUANTUM_RELATIONS, QUANTUM_TEXTS

pytestmark = pytest.mark.django_db

SESSIONS = "/api/v1/chat/sessions/"
MESSAGES = "/api/v1/chat/messages/"


def test_create_list_get_rename_delete_session(alice_client):  # type: ignore[no-untyped-def]
    created = alice_client.post(SESSIONS, {"title": "ML talk", "reasoning_engine": "graph"}, format="json")
    assert created.status_code == 201, created.json()
    body = created.json()
    assert body["title"] == "ML talk" and body["model_name"] == "snap" and body["reasoning_engine"] == "graph"
    assert body["graph_scope"] == "private"
    second = alice_client.post(SESSIONS, {"graph_scope": "world"}, format="json").json()
    listed = alice_client.get(SESSIONS).json()
    assert [s["id"] for s in listed["results"]] == [body["id"]]  # the request's scope: private (scope_resolve)
    assert [s["id"] for s in alice_client.get(SESSIONS, {"graph_scope": "world"}).json()["results"]] == [second["id"]]
    detail = alice_client.get(f"{SESSIONS}{body['id']}/").json()
    assert detail["messages"] == [] and detail["title"] == "ML talk"
    renamed = alice_client.patch(f"{SESSIONS}{body['id']}/", {"title": "Quantum"}, format="json")
    assert renamed.status_code == 200 and renamed.json()["title"] == "Quantum"
    assert alice_client.delete(f"{SESSIONS}{body['id']}/").status_code == 204
    assert alice_client.get(f"{SESSIONS}{body['id']}/").status_code == 404


def test_a_session_asked_for_with_a_misspelt_engine_field_is_refused_not_made_with_the_default(alice_client):  # type: ignore[no-untyped-def]
    response = alice_client.post(SESSIONS, {"title": "Tide tables", "engine": "graph"}, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "unknown_field" and "reasoning_engine" in error["hint"]
    assert not ChatSession.objects.exists()


def test_session_list_is_cursor_paged(alice_client):  # type: ignore[no-untyped-def]
    ids = [alice_client.post(SESSIONS, {"title": f"s{i}"}, format="json").json()["id"] for i in range(3)]
    first = alice_client.get(SESSIONS, {"limit": 2}).json()
    assert [s["id"] for s in first["results"]] == ids[::-1][:2] and first["next"]
    second = alice_client.get(first["next"]).json()
    assert [s["id"] for s in second["results"]] == [ids[0]]


def test_message_without_session_creates_one_titled_from_it_and_cites_evidence(alice, alice_client, alice_graph, fund):  # type: ignore[no-untyped-def]
    fund(alice, 10)
    before = credit_balance(account=alice)
    response = alice_client.post(
        MESSAGES, {"message": "What protects qubits from noise?", "reasoning_engine": "rag"}, format="json"
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["title"] == "What protects qubits from noise?"
    assert body["credits_charged"] == 3 and body["balance"] == before - 3 and body["usage"]["credits"] == 3
    assert "error correction protects qubits" in body["answer"].lower()
    # The short answer is what the evidence says does the asked verb ("Quantum error correction protects qubits"), so
    # the evidence says it is of the asked kind: the support is full (TYPE_SURENESS[1], issue 26 calibration).
    assert body["answer"].startswith("Quantum error correction [")
    assert body["grounded"] is True and body["support_score"] == pytest.approx(1.0, abs=0.001)
    cited = body["evidence"]
    assert cited and all(item["origin"] == "private" and item["kind"] == "passage" for item in cited)
    assert f"[{cited[0]['n']}]" in body["answer"]
    session = ChatSession.objects.get(id=body["session_id"], owner=alice)
    assert [m.role for m in session.messages.all()] == ["user", "assistant"]


def test_a_session_numbers_its_citations_1_to_n_across_turns(alice, alice_client, alice_graph, fund):  # type: ignore[no-untyped-def]
    # A reader of the session sees one list: a passage cited again keeps its number, and a new one takes the number
    # after the last cited, not after everything the earlier turns were handed ([1], then [1], then [2]; not [1],
    # [3], [5]).
    fund(alice, 20)

    def ask(message: str, session_id: str | None = None) -> dict:  # type: ignore[type-arg]
        body = {"message": message, "reasoning_engine": "rag"} | ({"session_id": session_id} if session_id else {})
        response = alice_client.post(MESSAGES, body, format="json")
        assert response.status_code == 201, response.json()
        return response.json()  # type: ignore[no-any-return]

    first = ask("What protects qubits from noise?")
    again = ask("What protects qubits from decoherence?", first["session_id"])
    new = ask("Which algorithm does quantum computing run?", first["session_id"])
    assert [(e["n"], e["text"]) for e in first["evidence"]] == [(1, QUANTUM_TEXTS[1])], first["answer"]
    assert [(e["n"], e["text"]) for e in again["evidence"]] == [(1, QUANTUM_TEXTS[1])], again["answer"]
    assert "[1]" in again["answer"]
    assert [(e["n"], e["text"]) for e in new["evidence"]] == [(2, QUANTUM_TEXTS[0])], new["answer"]
    assert "[2]" in new["answer"] and "[3]" not in new["answer"]
    # What the session shows: every turn's cited numbers point at the item the turn cited.
    shown = alice_client.get(f"{SESSIONS}{first['session_id']}/").json()["messages"]
    assert [[e["n"] for e in m["evidence"]] for m in shown if m["role"] == "assistant"] == [[1], [1], [2]]


def test_answer_says_plainly_when_the_graphs_do_not_hold_it(alice, alice_client, alice_graph, fund):  # type: ignore[no-untyped-def]
    fund(alice, 10)
    before = credit_balance(account=alice)
    body = alice_client.post(MESSAGES, {"message": "Who won the 1986 world cup?"}, format="json").json()
    assert body["answer"].startswith("Your documents don't say who won the 1986 world cup.")
    assert body["grounded"] is False and body["answered"] is False and body["support_score"] == 0.0
    # An answer the documents don't hold is not charged: the charge is refunded with the stored answer.
    assert body["credits_charged"] == 0 and body["usage"]["credits_refunded"] == 3
    assert credit_balance(account=alice) == before == body["balance"]


def test_retried_message_with_same_idempotency_key_answers_once_and_charges_once(
    alice, alice_client, alice_graph, fund
):  # type: ignore[no-untyped-def]
    fund(alice, 10)
    before = credit_balance(account=alice)
    payload = {"message": "What protects qubits?"}
    first = alice_client.post(MESSAGES, payload, format="json", HTTP_IDEMPOTENCY_KEY="m-1")
    again = alice_client.post(MESSAGES, payload, format="json", HTTP_IDEMPOTENCY_KEY="m-1")
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json() and again["Idempotent-Replayed"] == "true"
    assert credit_balance(account=alice) == before - 3
    assert ChatSession.objects.filter(owner=alice).count() == 1


def test_dry_run_quotes_ponder_and_charges_nothing(alice, alice_client, fund, settings):  # type: ignore[no-untyped-def]
    fund(alice, 10)
    settings.CHAT_PROVIDER = (
        "openai"  # with a language model ponder has its own price (offline: snap's, test_ponder_price)
    )
    before = credit_balance(account=alice)
    body = alice_client.post(f"{MESSAGES}?dry_run=true", {"message": "hi", "model": "ponder"}, format="json").json()
    assert body["dry_run"] is True and body["credits_needed"] == 10
    assert credit_balance(account=alice) == before and not ChatSession.objects.exists()


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        ({"message": "   "}, "invalid_message"),
        ({"message": "x" * 8001}, "message_too_long"),
        ({"message": "hi", "model": "gpt-9"}, "invalid_model"),
        ({"message": "hi", "reasoning_engine": "psychic"}, "invalid_reasoning_engine"),
        ({"message": "hi", "reasoning_engine": "web"}, "web_search_not_configured"),
        # A misspelt field would silently fall back to its default and be charged for it.
        ({"message": "Which answer do passages give?", "engine": "rag"}, "unknown_field"),
    ],
)
def test_bad_message_is_400_naming_the_fix_and_charges_nothing(alice, alice_client, fund, payload, code):  # type: ignore[no-untyped-def]
    fund(alice, 10)
    before = credit_balance(account=alice)
    response = alice_client.post(MESSAGES, payload, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == code
    if code == "invalid_model":
        assert "snap, ponder" in error["message"]
    if code == "invalid_reasoning_engine":
        assert "rag, graph, web" in error["message"]
    if code == "web_search_not_configured":
        assert "WEB_SEARCH_URL" in error["hint"]
    if code == "unknown_field":
        assert "'engine'" in error["message"] and "reasoning_engine" in error["hint"]
    assert credit_balance(account=alice) == before and not ChatSession.objects.exists()


def test_unfunded_message_is_402_and_writes_nothing(alice, alice_client, alice_graph):  # type: ignore[no-untyped-def]
    assert credit_balance(account=alice) < 3
    response = alice_client.post(MESSAGES, {"message": "What protects qubits?"}, format="json")
    assert response.status_code == 402 and not ChatSession.objects.exists()


def test_charlie_cannot_list_read_continue_or_delete_alices_sessions(
    alice, charlie, alice_client, charlie_client, alice_graph, write_doc, fund
):  # type: ignore[no-untyped-def]
    fund(alice, 10)
    fund(charlie, 10)
    charlie_graph = graph_create(actor=charlie, name="Charlie quantum", scope=Scope.PRIVATE)
    write_doc(
        charlie_graph,
        charlie,
        texts=["Quantum computing uses photons as qubits in Charlie's lab."],
        entities=[("Quantum computing", "concept", ""), ("Qubit", "concept", "")],
        filename="charlie.pdf",
    )
    alices = alice_client.post(MESSAGES, {"message": "What protects qubits from noise?"}, format="json").json()
    sid = alices["session_id"]
    charlie_session = charlie_client.post(SESSIONS, {"title": "mine"}, format="json").json()
    assert [s["id"] for s in charlie_client.get(SESSIONS).json()["results"]] == [charlie_session["id"]]
    assert charlie_client.get(f"{SESSIONS}{sid}/").status_code == 404
    assert charlie_client.patch(f"{SESSIONS}{sid}/", {"title": "x"}, format="json").status_code == 404
    assert charlie_client.delete(f"{SESSIONS}{sid}/").status_code == 404
    before = credit_balance(account=charlie)
    cont = charlie_client.post(MESSAGES, {"message": "more?", "session_id": sid}, format="json")
    assert cont.status_code == 404 and credit_balance(account=charlie) == before
    assert (
        charlie_client.post(MESSAGES, {"message": "hi", "graph_id": alice_graph.id}, format="json").status_code == 404
    )
    answer = charlie_client.post(
        MESSAGES, {"message": "What protects qubits from noise? What uses qubits?"}, format="json"
    ).json()
    handed = [i for m in ChatMessage.objects.filter(session__owner=charlie) for i in m.evidence]
    assert handed and all(i["graph_id"] == charlie_graph.id for i in handed)
    assert "error correction" not in answer["answer"].lower()
    assert ChatMessage.objects.filter(session_id=sid).count() == 2


def test_world_evidence_records_contributors_earnings_without_the_question(
    alice, charlie, charlie_client, write_doc, fund
):  # type: ignore[no-untyped-def]
    fund(charlie, 10)
    shared = graph_create(actor=alice, name="Shared quantum", scope=Scope.WORLD)
    write_doc(shared, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES, relations=QUANTUM_RELATIONS)
    question = "What protects qubits from noise?"
    body = charlie_client.post(MESSAGES, {"message": question, "graph_scope": "world"}, format="json").json()
    assert any(item["origin"] == "world" for item in body["evidence"])
    usage = WorldUsage.objects.get(querier=charlie)
    assert usage.contributor_ids == [alice.pk] and usage.source == "chat"
    assert question not in usage.query_digest


def test_graph_store_down_is_503_naming_it_and_refunds(alice, alice_client, alice_graph, fund, settings, tmp_path):  # type: ignore[no-untyped-def]
    from exograph.core import falkor

    fund(alice, 10)
    before = credit_balance(account=alice)
    live = settings.FALKORDB_URL
    settings.FALKORDB_URL = f"unix://{tmp_path}/dead.sock"
    falkor._clients.clear()
    try:
        response = alice_client.post(MESSAGES, {"message": "What protects qubits?"}, format="json")
    finally:
        settings.FALKORDB_URL = live
        falkor._clients.clear()
    assert response.status_code == 503 and "graph store" in response.json()["error"]["message"]
    assert credit_balance(account=alice) == before and not ChatSession.objects.exists()


def test_malformed_session_cursor_is_400(alice_client):  # type: ignore[no-untyped-def]
    response = alice_client.get(SESSIONS, {"cursor": "not-a-cursor"})
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_cursor"


def test_a_message_or_session_asking_for_the_other_scope_than_its_graph_has_is_refused_for_free(  # type: ignore[no-untyped-def]
    alice, alice_client, alice_graph
):
    """graph_id names alice's private graph and graph_scope says world: the session was stored as a world session
    reading a private graph (and answered, charged, under that label). Refused as research and uploads refuse it
    (graph_scope_mismatch); the header alone (a client's default) does not count against a named graph."""
    from billing.services import credits_grant_admin

    credits_grant_admin(account=alice, amount=50, actor=None, note="test funding")
    question = {"message": "What protects qubits from noise?", "graph_id": alice_graph.id, "graph_scope": "world"}
    for url, body in ((MESSAGES, question), (SESSIONS, {"graph_id": alice_graph.id, "graph_scope": "world"})):
        response = alice_client.post(url, body, format="json")
        assert response.status_code == 400, response.json()
        error = response.json()["error"]
        assert error["code"] == "graph_scope_mismatch" and alice_graph.id in error["message"]
        assert "graph_scope private" in error["hint"]
    assert credit_balance(account=alice) == 50
    assert not ChatSession.objects.exists() and not ChatMessage.objects.exists()
    by_header = alice_client.post(
        MESSAGES,
        {"message": question["message"], "graph_id": alice_graph.id},
        format="json",
        HTTP_X_GRAPH_SCOPE="world",
    )
    assert by_header.status_code == 201, by_header.json()
    assert by_header.json()["graph_scope"] == "private"  # the named graph's scope, not the header's
