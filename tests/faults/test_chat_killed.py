"""Chat generations under the chat.generation lease: SIGKILL the web process while a charged message waits on
the model provider, and the sweep (celery beat + a worker) refunds the charge that has no answer. An answered
message keeps its charge and leaves no lease; a provider failure is refunded at once, also leaving no lease.

Real parts: uvicorn (as make run starts it) on this test's PostgreSQL database and the session's Redis/FalkorDB,
prefork `celery worker` and `celery beat` subprocesses; the provider is a loopback fake of the OpenAI Chat
Completions API (the production SDK path). The lease TTL and sweep interval are shortened (4 s / 2 s)."""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any

import httpx
import pytest
from django.conf import settings
from django.db.models import Sum

from billing.models import CreditEntry
from billing.services import credit_balance, credits_grant_admin
from exograph.chat.models import ChatMessage
from exograph.chat.services import CHAT_LEASE
from exograph.core.leases import leases_sweep
from exograph.core.models import Lease
from exograph.core.scope import Scope
from exograph.graphs import store
from exograph.graphs.services import graph_create
from tests.fakes.llm_chat import FakeOpenAIChatServer
from tests.faults.conftest import chat_fault_env, wait_until

pytestmark = [pytest.mark.faults]

URL = "/api/v1/chat/messages/"
PRICE = 3  # snap
BABBAGE_TEXTS = [
    "Charles Babbage designed the Analytical Engine, a mechanical general-purpose computer, in 1837.",
    "Ada Lovelace wrote the first program for the Analytical Engine, computing Bernoulli numbers.",
]
BABBAGE_ENTITIES = [
    ("Charles Babbage", "person", "English mathematician and engineer."),
    ("Analytical Engine", "machine", "A mechanical general-purpose computer."),
    ("Ada Lovelace", "person", "English mathematician."),
]


def _ledger(user) -> int:  # type: ignore[no-untyped-def]
    return int(CreditEntry.objects.filter(account__user=user).aggregate(total=Sum("amount"))["total"] or 0)


def _entries(user) -> list[tuple[str, int]]:  # type: ignore[no-untyped-def]
    rows = CreditEntry.objects.filter(account__user=user, reference__icontains="chat").order_by("id")
    return list(rows.values_list("kind", "amount"))


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_web_killed_mid_generation_the_sweep_refunds_the_unanswered_charge(
    alice, charlie, api_key_for, start_web, start_worker, stuck_provider
):
    credits_grant_admin(account=alice, amount=100, actor=None, note="tests")
    credits_grant_admin(account=charlie, amount=100, actor=None, note="tests")
    services, web_env = chat_fault_env(stuck_provider)
    web = start_web(web_env)
    key = api_key_for(alice)
    outcome: list[Any] = []

    def send() -> None:
        try:
            response = httpx.post(
                f"{web.base}{URL}",
                json={"message": "Who designed the Analytical Engine?", "model": "snap"},
                headers={"Authorization": f"Bearer {key}"},
                timeout=60,
            )
            outcome.append(response.status_code)
        except httpx.TransportError as exc:
            outcome.append(type(exc).__name__)

    client = threading.Thread(target=send, daemon=True)
    client.start()
    assert stuck_provider.asked.wait(timeout=60), web.log()[-3000:]  # charged, generating
    assert credit_balance(account=alice) == 100 - PRICE
    assert Lease.objects.filter(kind=CHAT_LEASE, subject_id__startswith=f"{alice.pk}:").exclude(holder="").exists()
    os.killpg(web.process.pid, signal.SIGKILL)  # the web process dies between the charge and the answer
    web.process.wait(timeout=10)
    killed_at = time.monotonic()
    client.join(timeout=30)
    assert outcome and outcome[0] != 201, outcome  # the client lost its request
    assert credit_balance(account=alice) == 100 - PRICE  # charged, unanswered: nobody is left to refund it

    worker = start_worker(redis_url=settings.REDIS_URL, broker_url=settings.CELERY_BROKER_URL, extra_env=services)
    start_worker(
        redis_url=settings.REDIS_URL, broker_url=settings.CELERY_BROKER_URL, command="beat", extra_env=services
    )

    def refunded() -> bool:
        assert worker.process.poll() is None, worker.log()[-3000:]
        return credit_balance(account=alice) == 100

    wait_until(refunded, timeout=120, what="the unanswered charge refunded", interval=0.3)
    refunded_in = time.monotonic() - killed_at
    assert _entries(alice) == [("charge", -PRICE), ("refund", PRICE)]  # refunded once
    assert credit_balance(account=alice) == 100 == _ledger(alice)
    assert not ChatMessage.objects.filter(session__owner=alice).exists()  # no half-written turn
    assert not Lease.objects.filter(kind=CHAT_LEASE).exists()
    assert credit_balance(account=charlie) == 100 == _ledger(charlie)  # nobody else touched
    print(f"web SIGKILLed mid-generation: chat charge refunded {refunded_in:.1f} s later")  # the fault table


@pytest.mark.django_db(transaction=True)
def test_an_answered_message_keeps_its_charge_and_a_failed_one_is_refunded_leaving_no_lease(
    alice, alice_client, settings, write_doc
):
    credits_grant_admin(account=alice, amount=100, actor=None, note="tests")
    # The documents answer the question: an answer they do not hold would be refunded by design (honest grounding).
    graph = graph_create(actor=alice, name="Babbage notes", scope=Scope.PRIVATE)
    write_doc(graph, alice, texts=BABBAGE_TEXTS, entities=BABBAGE_ENTITIES)
    with FakeOpenAIChatServer() as provider:
        settings.CHAT_PROVIDER = "openai"
        settings.LLM_BASE_URL = provider.base_url
        settings.LLM_API_KEY = provider.api_key
        settings.CHAT_SNAP_MODEL = "fast-model"
        settings.LLM_TIMEOUT_SECONDS = 2.0
        settings.LLM_MAX_RETRIES = 0
        provider.queue("Charles Babbage designed the Analytical Engine [1].")
        answered = alice_client.post(
            URL, {"message": "Who designed the Analytical Engine?", "graph_id": str(graph.id)}, format="json"
        )
        assert answered.status_code == 201, answered.json()
        assert answered.json()["grounded"] is True, answered.json()
        assert not Lease.objects.filter(kind=CHAT_LEASE).exists()
        provider.fail_next(503, {"error": {"message": "overloaded"}})
        failed = alice_client.post(URL, {"message": "And who programmed it?"}, format="json")
        assert failed.status_code in (502, 503), failed.json()
        assert not Lease.objects.filter(kind=CHAT_LEASE).exists()
    assert leases_sweep() == {}  # nothing left for the sweep: the answered charge stays paid
    assert _entries(alice) == [("charge", -PRICE), ("charge", -PRICE), ("refund", PRICE)]
    assert credit_balance(account=alice) == 100 - PRICE == _ledger(alice)
    store.store_drop(f"exo:{graph.id}")
