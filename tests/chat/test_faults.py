"""Chat faults through the official SDKs and loopback fakes: provider down, rate limited, overloaded, failing
mid-stream. Each failure is a 5xx naming the provider, refunded, with nothing half-written."""

from __future__ import annotations

import json
import socket

import pytest

from billing.models import CreditEntry
from billing.services import credit_balance
from exograph.chat.models import ChatMessage, ChatSession
from exograph.core.scope import Scope
from exograph.graphs.services import graph_create
from tests.fakes.llm_chat import anthropic_error
from tests.fakes.openai_server import openai_error
from tests.graphs.conftest import QUANTUM_ENTITIES, QUANTUM_RELATIONS, QUANTUM_TEXTS

pytestmark = pytest.mark.django_db

MESSAGES = "/api/v1/chat/messages/"
QUESTION = {"message": "What protects qubits?"}


@pytest.fixture
def alice_graph(alice, write_doc, fund):  # type: ignore[no-untyped-def]
    fund(alice, 30)
    graph = graph_create(actor=alice, name="Quantum notes", scope=Scope.PRIVATE)
    write_doc(graph, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES, relations=QUANTUM_RELATIONS)
    return graph


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _nothing_kept(alice, before: int) -> None:  # type: ignore[no-untyped-def]
    assert credit_balance(account=alice) == before
    assert not ChatSession.objects.exists() and not ChatMessage.objects.exists()


def test_provider_down_is_503_naming_it_and_refunded(alice, alice_client, alice_graph, openai_chat, settings):  # type: ignore[no-untyped-def]
    settings.LLM_BASE_URL = f"http://127.0.0.1:{_closed_port()}/v1"
    settings.LLM_MAX_RETRIES = 0
    before = credit_balance(account=alice)
    response = alice_client.post(MESSAGES, QUESTION, format="json")
    assert response.status_code == 503, response.json()
    error = response.json()["error"]
    assert error["code"] == "llm_unavailable" and "openai provider is unreachable" in error["message"]
    _nothing_kept(alice, before)
    # The charge and its refund are both in the ledger: the account paid nothing.
    kinds = list(CreditEntry.objects.filter(account__user=alice).order_by("id").values_list("kind", flat=True))
    assert kinds[-2:] == ["charge", "refund"]


def test_rate_limited_provider_is_retried_after_its_retry_after_and_charged_once(
    alice, alice_client, alice_graph, openai_chat, settings
):  # type: ignore[no-untyped-def]
    settings.LLM_MAX_RETRIES = 2
    before = credit_balance(account=alice)
    openai_chat.fail_next(429, openai_error("slow down", code="rate_limit_exceeded"), headers={"retry-after": "0"})
    openai_chat.queue("Quantum error correction protects qubits [1].")
    response = alice_client.post(MESSAGES, QUESTION, format="json")
    assert response.status_code == 201, response.json()
    assert len(openai_chat.requests) == 2  # the 429, then the retry the SDK made
    assert response.json()["answer"] == "Quantum error correction protects qubits [1]."
    assert credit_balance(account=alice) == before - 3


def test_overloaded_anthropic_after_retries_is_503_and_refunded(alice, alice_client, alice_graph, anthropic_chat):  # type: ignore[no-untyped-def]
    before = credit_balance(account=alice)
    anthropic_chat.fail_next(529, anthropic_error(529, "Overloaded"), times=2, headers={"retry-after": "0"})
    response = alice_client.post(MESSAGES, QUESTION, format="json")
    assert response.status_code == 503 and "anthropic" in response.json()["error"]["message"]
    assert len(anthropic_chat.requests) == 2  # LLM_MAX_RETRIES=1 in the fixture: one retry, then give up
    _nothing_kept(alice, before)


def test_a_stream_that_fails_midway_is_refunded_and_keeps_no_half_answer(alice, alice_client, alice_graph, openai_chat):  # type: ignore[no-untyped-def]
    before = credit_balance(account=alice)
    chunk = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1, "model": "fast-model"}
    first = {**chunk, "choices": [{"index": 0, "delta": {"content": "Quantum error "}, "finish_reason": None}]}
    broken = {"error": {"message": "The server had an error while processing your request.", "type": "server_error"}}
    body = f"data: {json.dumps(first)}\n\ndata: {json.dumps(broken)}\n\n".encode()
    openai_chat.fail_next(200, body, times=2)
    received: list[str] = []
    from exograph.chat.services import chat_message_prepare, chat_message_send
    from exograph.core.llm.completions import LLMError

    plan = chat_message_prepare(actor=alice, message=QUESTION["message"])
    with pytest.raises(LLMError) as failure:
        chat_message_send(actor=alice, plan=plan, on_token=received.append)
    assert received == ["Quantum error "]  # tokens did stream before the failure
    assert failure.value.status == 503 and failure.value.message == "The openai provider failed while answering."
    assert not ChatMessage.objects.exists()
    response = alice_client.post(MESSAGES, QUESTION, format="json")
    assert response.status_code == 503 and "openai" in response.json()["error"]["message"]
    _nothing_kept(alice, before)


def test_an_anthropic_stream_that_fails_midway_is_transient_503_and_refunded(  # type: ignore[no-untyped-def]
    alice, alice_client, alice_graph, anthropic_chat
):
    before = credit_balance(account=alice)
    start = {
        "id": "msg_fake", "type": "message", "role": "assistant", "model": "fast-model", "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 5, "output_tokens": 1},
    }  # fmt: skip
    events = [
        ("message_start", {"type": "message_start", "message": start}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Quantum "}}),
        ("error", anthropic_error(529, "Overloaded")),
    ]  # fmt: skip
    body = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()
    anthropic_chat.fail_next(200, body, times=2, headers={"content-type": "text/event-stream"})
    response = alice_client.post(MESSAGES, QUESTION, format="json")
    assert response.status_code == 503, response.json()
    error = response.json()["error"]
    assert error["message"] == "The anthropic provider failed while answering." and error["code"] == "llm_unavailable"
    _nothing_kept(alice, before)
