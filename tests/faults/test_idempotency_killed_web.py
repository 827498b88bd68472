"""An Idempotency-Key claim left by a SIGKILLed web process (issue 23 §4): the retry on the restarted web is
answered at once (409 with Retry-After while the interrupted charge waits for the sweep, never a 30 s wait
for a dead process), and once the sweep has refunded the chat message the retry gets that outcome, stored.

Real parts: uvicorn (as make run starts it) on this test's database and the session's Redis/FalkorDB,
prefork `celery worker` and `celery beat` subprocesses; the provider is a loopback fake of the OpenAI Chat
Completions API. The lease TTL and sweep interval are shortened (4 s / 2 s)."""

from __future__ import annotations

import os
import signal
import threading
from typing import Any

import httpx
import pytest
from django.conf import settings

from billing.models import IdempotencyStatus, IdempotentRequest
from billing.services import credit_balance, credits_grant_admin
from exograph.chat.services import CHAT_LEASE
from exograph.core.models import Lease
from tests.faults.conftest import chat_fault_env, wait_until
from tests.faults.test_chat_killed import PRICE, URL, _entries, _ledger

pytestmark = [pytest.mark.faults]


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_claim_of_a_killed_web_answers_at_once_and_then_the_refund(
    alice, api_key_for, start_web, start_worker, stuck_provider
):
    credits_grant_admin(account=alice, amount=100, actor=None, note="tests")
    services, web_env = chat_fault_env(stuck_provider)
    web = start_web(web_env)
    headers = {"Authorization": f"Bearer {api_key_for(alice)}", "Idempotency-Key": "message-after-a-crash"}
    body = {"message": "Who designed the Analytical Engine?", "model": "snap"}
    outcome: list[Any] = []

    def send() -> None:
        try:
            outcome.append(httpx.post(f"{web.base}{URL}", json=body, headers=headers, timeout=60).status_code)
        except httpx.TransportError as exc:
            outcome.append(type(exc).__name__)

    client = threading.Thread(target=send, daemon=True)
    client.start()
    assert stuck_provider.asked.wait(timeout=60), web.log()[-3000:]  # claimed, charged, generating
    os.killpg(web.process.pid, signal.SIGKILL)
    web.process.wait(timeout=10)
    client.join(timeout=30)
    assert outcome and outcome[0] != 201, outcome
    assert IdempotentRequest.objects.get(key=headers["Idempotency-Key"]).status == IdempotencyStatus.IN_PROGRESS

    restarted = start_web(web_env)  # the supervisor's restart; no worker yet, so the charge is not settled
    pending = httpx.post(f"{restarted.base}{URL}", json=body, headers=headers, timeout=60)
    assert pending.status_code == 409, pending.text
    assert pending.json()["error"]["code"] == "idempotency_in_progress"
    assert int(pending.headers["Retry-After"]) >= 1  # when to come back, not a connection held for 30 s
    assert credit_balance(account=alice) == 100 - PRICE

    worker = start_worker(redis_url=settings.REDIS_URL, broker_url=settings.CELERY_BROKER_URL, extra_env=services)
    start_worker(
        redis_url=settings.REDIS_URL, broker_url=settings.CELERY_BROKER_URL, command="beat", extra_env=services
    )

    def refunded() -> bool:
        assert worker.process.poll() is None, worker.log()[-3000:]
        return credit_balance(account=alice) == 100

    wait_until(refunded, timeout=120, what="the interrupted message refunded by the sweep", interval=0.3)
    retry = httpx.post(f"{restarted.base}{URL}", json=body, headers=headers, timeout=60)
    assert retry.status_code == 503, retry.text
    error = retry.json()["error"]
    assert error["code"] == "request_interrupted" and error["credits_refunded"] == PRICE
    again = httpx.post(f"{restarted.base}{URL}", json=body, headers=headers, timeout=60)
    assert again.content == retry.content and again.headers["Idempotent-Replayed"] == "true"
    assert _entries(alice) == [("charge", -PRICE), ("refund", PRICE)]  # charged once, refunded once
    assert credit_balance(account=alice) == 100 == _ledger(alice)
    assert not Lease.objects.filter(kind=CHAT_LEASE).exists()
