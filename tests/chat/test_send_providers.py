"""send_chat_message through the openai and anthropic SDKs against loopback fakes; refunds on failure."""

from __future__ import annotations

import pytest

from billing.services import credit_balance
from exograph.chat.models import ChatSession
from exograph.core.scope import Scope
from exograph.graphs.services import graph_create
from tests.fakes.llm_chat import anthropic_error
from tests.fakes.openai_server import openai_error
from tests.graphs.conftest import QUANTUM_ENTITIES, QUANTUM_RELATIONS, QUANTUM_TEXTS

pytestmark = pytest.mark.django_db

MESSAGES = "/api/v1/chat/messages/"


@pytest.fixture
def alice_graph(alice, write_doc):  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Quantum notes", scope=Scope.PRIVATE)
    write_doc(graph, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES, relations=QUANTUM_RELATIONS)
    return graph


def _evidence_numbers(system: str) -> list[int]:
    import re

    return [int(n) for n in re.findall(r"^\[(\d+)\]", system, re.MULTILINE)]


def test_openai_answer_is_checked_against_the_numbered_evidence(alice, alice_client, alice_graph, fund, openai_chat):  # type: ignore[no-untyped-def]
    fund(alice, 10)
    openai_chat.queue("Quantum error correction protects qubits from noise [1]. It was invented in 1995 [1]. [42]")
    body = alice_client.post(
        MESSAGES, {"message": "What protects qubits?", "reasoning_engine": "rag"}, format="json"
    ).json()
    sent = openai_chat.bodies[0]
    assert sent["model"] == "fast-model" and sent["stream"] is True
    assert "(private, passage" in sent["messages"][0]["content"]
    assert _evidence_numbers(sent["messages"][0]["content"])[0] == 1
    assert body["citations"]["invalid"] == [42] and "[42]" not in body["answer"]
    assert body["citations"]["unsupported"][0]["figures"] == ["1995"]
    assert (
        body["grounded"] is True and body["support_score"] == 0.0
    )  # the one factual sentence (a figure) is unsupported
    assert body["usage"]["provider"] == "openai" and body["usage"]["output_tokens"] > 0


def test_ponder_runs_a_second_checking_pass_with_the_strong_model(
    alice, alice_client, alice_graph, fund, anthropic_chat
):  # type: ignore[no-untyped-def]
    fund(alice, 20)
    anthropic_chat.queue("Draft: qubits are protected by magic [1].", "Quantum error correction protects qubits [1].")
    body = alice_client.post(MESSAGES, {"message": "What protects qubits?", "model": "ponder"}, format="json").json()
    assert body["credits_charged"] == 10
    assert [b["model"] for b in anthropic_chat.bodies] == ["claude-strong", "claude-strong"]
    assert "Draft: qubits are protected by magic" in anthropic_chat.bodies[1]["messages"][0]["content"]
    assert body["answer"] == "Quantum error correction protects qubits [1]."


def test_prior_turns_reach_the_model_within_the_token_budget(
    alice, alice_client, alice_graph, fund, openai_chat, settings
):  # type: ignore[no-untyped-def]
    fund(alice, 20)
    openai_chat.queue("Error correction [1].", "Shor's algorithm [2].", "Third.")
    first = alice_client.post(MESSAGES, {"message": "What protects qubits?"}, format="json").json()
    alice_client.post(MESSAGES, {"message": "And what runs on them?", "session_id": first["session_id"]}, format="json")
    assert [m["role"] for m in openai_chat.bodies[1]["messages"]] == ["system", "user", "assistant", "user"]
    from exograph.chat.tokens import token_count

    newest = token_count("And what runs on them?") + token_count("Shor's algorithm [2].")
    assert newest < len("And what runs on them? Shor's algorithm [2].")  # tokens, not characters
    settings.CHAT_HISTORY_TOKENS = newest + 1  # room for the newest exchange only
    alice_client.post(MESSAGES, {"message": "Thanks", "session_id": first["session_id"]}, format="json")
    contents = [m["content"] for m in openai_chat.bodies[2]["messages"][1:]]
    assert contents == ["And what runs on them?", "Shor's algorithm [2].", "Thanks"]


@pytest.mark.parametrize(
    ("status", "expected", "code"),
    [(500, 503, "llm_unavailable"), (401, 502, "llm_rejected")],
)
def test_provider_failure_refunds_the_message_and_names_the_provider(
    alice, alice_client, alice_graph, fund, openai_chat, status, expected, code
):  # type: ignore[no-untyped-def]
    fund(alice, 10)
    before = credit_balance(account=alice)
    openai_chat.fail_next(status, openai_error("nope"), times=3, headers={"retry-after": "0"})
    response = alice_client.post(MESSAGES, {"message": "What protects qubits?"}, format="json")
    assert response.status_code == expected
    assert response.json()["error"]["code"] == code and "openai" in response.json()["error"]["message"]
    assert credit_balance(account=alice) == before and not ChatSession.objects.exists()


def test_provider_timeout_is_504_and_refunded(alice, alice_client, alice_graph, fund, anthropic_chat, settings):  # type: ignore[no-untyped-def]
    fund(alice, 10)
    settings.LLM_TIMEOUT_SECONDS = 0.3
    settings.LLM_MAX_RETRIES = 0
    before = credit_balance(account=alice)
    anthropic_chat.fail_next(200, anthropic_error(500, "slow"), delay=1.5)
    response = alice_client.post(MESSAGES, {"message": "What protects qubits?"}, format="json")
    assert response.status_code == 504 and "anthropic" in response.json()["error"]["message"]
    assert credit_balance(account=alice) == before and not ChatSession.objects.exists()


def test_the_prompt_asks_for_the_short_answer_first_or_not_in_the_documents_and_lists_facts_with_numbers(
    alice, alice_client, alice_graph, fund, openai_chat
):  # type: ignore[no-untyped-def]
    import re

    fund(alice, 10)
    openai_chat.queue("Quantum error correction [1]. It protects qubits from noise and decoherence [1].")
    body = alice_client.post(
        MESSAGES, {"message": "What shields qubits against noise?", "reasoning_engine": "graph"}, format="json"
    ).json()
    system = openai_chat.bodies[0]["messages"][0]["content"]
    assert "Start with the short answer alone" in system and 'reply with "Not in the documents:"' in system
    # The graph's facts reach the model with their numbers, ahead of the passages.
    lines = [line for line in system.splitlines() if re.match(r"^\[\d+\] \(", line)]
    kinds = [re.match(r"^\[\d+\] \(\w+, (\w+)", line).group(1) for line in lines]  # type: ignore[union-attr]
    assert {"fact", "passage"} <= set(kinds)
    assert max(i for i, k in enumerate(kinds) if k != "passage") < min(i for i, k in enumerate(kinds) if k == "passage")
    assert any("Quantum error correction protects Qubit" in line for line in lines if ", fact" in line)
    # The reply is checked: its citations point at items handed over, its first sentence is the short answer.
    assert body["answered"] is True and body["grounded"] is True
    assert body["short_answer"] == "Quantum error correction"
    assert set(body["citations"]["cited"]) <= {item["n"] for item in body["considered"]}


@pytest.mark.parametrize(
    "reply", ["Not in the documents: the closest items are about qubits [1].", "Your documents don't say."]
)
def test_a_reply_saying_the_documents_do_not_answer_is_not_grounded_and_refunded(
    alice, alice_client, alice_graph, fund, openai_chat, reply
):  # type: ignore[no-untyped-def]
    fund(alice, 10)
    before = credit_balance(account=alice)
    openai_chat.queue(reply)
    response = alice_client.post(
        MESSAGES, {"message": "What protects qubits from noise?", "reasoning_engine": "rag"}, format="json"
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    # The evidence matches the question well; the model's own "not in the documents" still decides.
    assert body["answered"] is False and body["grounded"] is False and body["support_score"] == 0.0
    assert body["short_answer"] == ""
    assert body["usage"]["credits_refunded"] > 0 and body["credits_charged"] == body["usage"]["credits"] == 0
    assert credit_balance(account=alice) == before


def test_the_offline_reader_streams_its_answer_a_sentence_at_a_time(alice, alice_graph, fund):  # type: ignore[no-untyped-def]
    """The default extractive model hands the sink one sentence per call, the short answer first, so a page
    shows the answer before the supporting sentences, and the pieces joined are the stored answer."""
    from exograph.chat.services import chat_message_prepare, chat_message_send

    fund(alice, 10)
    received: list[str] = []
    plan = chat_message_prepare(actor=alice, message="Which technique keeps qubits safe from noise?")
    result = chat_message_send(actor=alice, plan=plan, on_token=received.append)
    assert result["answered"] and len(received) >= 2, received
    assert "".join(received).strip() == result["answer"]
    assert result["short_answer"] in received[0] and received[0].rstrip().endswith((".", "?", "!"))
