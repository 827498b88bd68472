"""Chat streaming over the one events socket (/ws/events/): a real uvicorn server, real WebSocket clients
authenticated by their login session, the Redis channel layer, REST calls over HTTP."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import httpx
import pytest
from django.conf import settings
from django.test import Client
from websockets.sync.client import ClientConnection, connect

from billing.services import credit_balance
from exograph.chat.models import ChatSession
from exograph.core.scope import Scope
from exograph.graphs.services import graph_create
from tests.e2e.test_browser import live_server_url  # noqa: F401 - the uvicorn fixture
from tests.fakes.openai_server import openai_error
from tests.graphs.conftest import QUANTUM_ENTITIES, QUANTUM_RELATIONS, QUANTUM_TEXTS

pytestmark = pytest.mark.django_db(transaction=True)

MESSAGES = "/api/v1/chat/messages/"


@pytest.fixture(autouse=True)
def _fresh_channel_layer():  # type: ignore[no-untyped-def]
    """A layer's Redis connections belong to the event loop that made them: a new layer per server."""
    from channels.layers import channel_layers

    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()


def _socket(base: str, user: Any) -> ClientConnection:
    client = Client()
    client.force_login(user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
    return connect(
        base.replace("http://", "ws://") + "/ws/events/",
        additional_headers={"Cookie": f"{settings.SESSION_COOKIE_NAME}={cookie}", "Origin": base},
        open_timeout=10,
    )


def _events_until_done(ws: ClientConnection, *, timeout: float = 30) -> list[dict[str, Any]]:
    """Every event up to and including the first chat.done or chat.error."""
    events: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        event = json.loads(ws.recv(timeout=deadline - time.monotonic()))
        events.append(event)
        if event["type"] in ("chat.done", "chat.error"):
            return events
    raise AssertionError(f"no chat.done within {timeout}s: {events}")


def _quiet(ws: ClientConnection, seconds: float = 1.0) -> list[dict[str, Any]]:
    """Whatever else arrives within `seconds` (nothing, for a socket that must not see others' events)."""
    extra: list[dict[str, Any]] = []
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            extra.append(json.loads(ws.recv(timeout=left)))
        except TimeoutError:
            break
    return extra


@pytest.fixture
def graphs(alice, charlie, write_doc):  # type: ignore[no-untyped-def]
    mine = graph_create(actor=alice, name="Quantum notes", scope=Scope.PRIVATE)
    write_doc(mine, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES, relations=QUANTUM_RELATIONS)
    his = graph_create(actor=charlie, name="Charlie notes", scope=Scope.PRIVATE)
    write_doc(
        his,
        charlie,
        texts=["Photonic qubits travel through optical fibre. Charlie's lab cools photonic qubits."],
        entities=[("Photonic qubit", "concept", "")],
    )
    return mine, his


def test_each_socket_streams_its_own_users_tokens_and_done_event_only(
    live_server_url,  # noqa: F811
    alice,
    charlie,
    alice_key,
    charlie_key,
    graphs,
    fund,
):  # type: ignore[no-untyped-def]
    base = live_server_url
    fund(alice, 10)
    fund(charlie, 10)
    with _socket(base, alice) as alice_ws, _socket(base, charlie) as charlie_ws, httpx.Client(base_url=base) as http:
        sent = http.post(
            MESSAGES,
            json={"message": "What protects qubits from noise? What does quantum computing use?"},
            headers={"Authorization": f"Bearer {alice_key}"},
            timeout=60,
        )
        assert sent.status_code == 201, sent.text
        answer = sent.json()
        events = _events_until_done(alice_ws)
        ids = {(e["session_id"], e["message_id"]) for e in events}
        assert ids == {(answer["session_id"], answer["message_id"])}
        kinds = [e["type"] for e in events]
        assert kinds[0] == "chat.status" and kinds[-1] == "chat.done" and "chat.token" in kinds
        assert [e["phase"] for e in events if e["type"] == "chat.status"] == ["retrieving", "generating"]
        tokens = [e for e in events if e["type"] == "chat.token"]
        assert [t["seq"] for t in tokens] == list(range(len(tokens)))
        assert len(tokens) >= 2  # the first sentence arrives before the rest (TOKEN_FLUSH_SECONDS coalesces)
        streamed = "".join(t["text"] for t in tokens)
        assert streamed.strip() == answer["answer"]  # extractive: the checked answer is what was streamed
        done = events[-1]
        assert done["answer"] == answer["answer"] and done["support_score"] == answer["support_score"]
        assert [e["n"] for e in done["evidence"]] == [e["n"] for e in answer["evidence"]]
        assert done["balance"] == answer["balance"] == credit_balance(account=alice)
        # The done event comes after commit: the session and message are there for a REST catch-up.
        caught_up = http.get(
            f"/api/v1/chat/sessions/{done['session_id']}/", headers={"Authorization": f"Bearer {alice_key}"}
        ).json()
        assert caught_up["messages"][-1]["id"] == done["message_id"]
        assert _quiet(charlie_ws) == []  # nothing of alice's reached charlie

        his = http.post(
            MESSAGES,
            json={"message": "What cools photonic qubits?"},
            headers={"Authorization": f"Bearer {charlie_key}"},
            timeout=60,
        ).json()
        charlie_events = _events_until_done(charlie_ws)
        assert {e["message_id"] for e in charlie_events} == {his["message_id"]}
        assert "error correction" not in json.dumps(charlie_events).lower()
        assert _quiet(alice_ws) == []


def test_a_failing_provider_sends_chat_error_and_the_event_loop_keeps_serving_while_it_waits(
    live_server_url,  # noqa: F811
    alice,
    alice_key,
    graphs,
    fund,
    openai_chat,
    settings,
):  # type: ignore[no-untyped-def]
    base = live_server_url
    fund(alice, 10)
    before = credit_balance(account=alice)
    settings.LLM_TIMEOUT_SECONDS = 10
    settings.LLM_MAX_RETRIES = 0
    # The provider takes 3 s to fail: the request's thread waits, the server's event loop must not.
    openai_chat.fail_next(503, openai_error("overloaded"), delay=3.0)
    result: dict[str, Any] = {}

    def post() -> None:
        with httpx.Client(base_url=base) as http:
            result["response"] = http.post(
                MESSAGES,
                json={"message": "What protects qubits?"},
                headers={"Authorization": f"Bearer {alice_key}"},
                timeout=60,
            )

    with _socket(base, alice) as ws:
        worker = threading.Thread(target=post)
        worker.start()
        seen = []
        while not any(e.get("phase") == "generating" for e in seen):
            seen.append(json.loads(ws.recv(timeout=30)))
        ws.send(json.dumps({"type": "ping"}))
        pong = json.loads(ws.recv(timeout=2))  # answered while the generation is still in flight
        assert pong == {"type": "pong"}
        assert "response" not in result
        events = _events_until_done(ws)
        worker.join(timeout=30)
    assert events[-1]["type"] == "chat.error" and "openai" in events[-1]["error"]["message"]
    response = result["response"]
    assert response.status_code == 503 and response.json()["error"]["code"] == "llm_unavailable"
    assert credit_balance(account=alice) == before and not ChatSession.objects.exists()
