"""Nothing stuck when a stage's message is never sent (issue 23, items 1 and 3): the work was recorded (a due lease,
in the transaction that asked for it) before its message was sent, so whatever dies between the two, the lease
sweep sends it. Each case ends with the document processed, charged once, and the balance equal to the ledger.

1. redis-server (broker and store) SIGKILLed while a stage runs: the stage ends, and sending the next stage's
   message raises kombu's OperationalError. Once redis-server is back, the sweep sends it.
2. The web process SIGKILLed between an upload's commit and its on-commit enqueue (its broker is a socket that
   never answers, so the request hangs in the enqueue until the kill): the sweep starts the document; `retry` on
   such a document starts it at once instead of answering 409.

Real parts: uvicorn, a prefork `celery worker` and `celery beat` as subprocesses, a throwaway FalkorDB/Redis
(broker, store, limiter), this test's database (SQLite or PostgreSQL). Leases are shortened (TTL 4 s, sweep every
2 s, due work resumed 3 s after it was recorded); the defaults are 30 s / 15 s / 30 s."""

from __future__ import annotations

import os
import signal
import threading
import time
import uuid
from collections.abc import Iterator

import httpx
import pytest
from django.db.models import Sum

from billing.models import CreditEntry
from billing.services import credit_balance, credits_grant_admin
from exograph.core.models import Lease
from exograph.documents.models import Document, DocumentStage, DocumentStatus
from exograph.documents.services.state import DOCUMENT_LEASE, EMBED_TASK
from tests.factories import graph_stores_drop
from tests.faults.conftest import broker_urls, short_lease_env, wait_until

pytestmark = [pytest.mark.faults, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

URL = "/api/v1/documents/"
TEXT = "\n\n".join(
    f"Section {i}. Ada Lovelace wrote about the Analytical Engine designed by Charles Babbage in London. "
    f"Her notes on Bernoulli numbers, part {i}, are read as the first published program."
    for i in range(120)
)
SHORT_TEXT = "Grace Hopper wrote the first compiler, A-0, and worked on COBOL for the United States Navy. " * 20
# Bounds: the model's load and the document on a busy 2-core machine; recovery after the fault.
RUNNING_BOUND, RECOVERY_BOUND = 180, 240


@pytest.fixture(autouse=True)
def _drop_graph_stores() -> Iterator[None]:
    yield
    graph_stores_drop(missing_ok=True)  # the throwaway store is gone with its test


def _ledger(user) -> int:  # type: ignore[no-untyped-def]
    return int(CreditEntry.objects.filter(account__user=user).aggregate(total=Sum("amount"))["total"] or 0)


def _entries(document_id: str) -> list[tuple[str, int]]:
    rows = CreditEntry.objects.filter(reference__contains=document_id).order_by("id")
    return list(rows.values_list("kind", "amount"))


def _store_env(server) -> dict[str, str]:  # type: ignore[no-untyped-def]
    redis_url, broker_url = broker_urls(server, tcp=False)
    return {"REDIS_URL": redis_url, "FALKORDB_URL": redis_url, "CELERY_BROKER_URL": broker_url}


def _workers(start_worker, server, env: dict[str, str], *, beat: bool = True):  # type: ignore[no-untyped-def]
    redis_url, broker_url = broker_urls(server, tcp=False)
    worker = start_worker(redis_url=redis_url, broker_url=broker_url, queues="ingest,default", extra_env=env)
    if beat:
        start_worker(redis_url=redis_url, broker_url=broker_url, command="beat", extra_env=env)
    return worker


def _finished(document_id: str, *processes) -> bool:  # type: ignore[no-untyped-def]
    for process in processes:
        assert process.process.poll() is None, process.log()[-3000:]
    return Document.objects.get(pk=document_id).status in (DocumentStatus.PROCESSED, DocumentStatus.FAILED)


def _processed_once(document_id: str, worker, user) -> None:  # type: ignore[no-untyped-def]
    """Wait for the document to end: processed, paid exactly once (nothing refunded), balance equal to the ledger."""
    try:
        wait_until(lambda: _finished(document_id, worker), timeout=RECOVERY_BOUND, what="the document finished")
    except AssertionError as exc:
        raise AssertionError(f"{exc}; the worker's log:\n{worker.log()[-3000:]}") from None
    document = Document.objects.get(pk=document_id)
    assert document.status == DocumentStatus.PROCESSED, (document.failure_reason, worker.log()[-3000:])
    assert _entries(document_id) == [("charge", -document.credits_charged)]
    assert credit_balance(account=user) == 100 - document.credits_charged == _ledger(user)


def test_redis_killed_under_a_finishing_stage_the_next_stage_is_sent_once_it_is_back(
    alice, api_key_for, throwaway_store, start_web, start_worker
):
    credits_grant_admin(account=alice, amount=100, actor=None, note="tests")
    env = short_lease_env(EXOGRAPH_LEASE_STUCK="3")
    worker = _workers(start_worker, throwaway_store, env)
    web = start_web({**env, **_store_env(throwaway_store)})
    headers = {"Authorization": f"Bearer {api_key_for(alice)}", "Idempotency-Key": uuid.uuid4().hex}
    response = httpx.post(
        f"{web.base}{URL}", json={"text": TEXT, "title": "Lovelace notes"}, headers=headers, timeout=120
    )
    assert response.status_code == 201, response.text
    document_id = response.json()["id"]
    held = Lease.objects.filter(kind=DOCUMENT_LEASE, subject_id=document_id, step=EMBED_TASK).exclude(holder="")
    wait_until(lambda: held.exists() or _finished(document_id, worker), timeout=RUNNING_BOUND, what="embed running")

    assert throwaway_store.process is not None
    throwaway_store.process.send_signal(signal.SIGKILL)  # broker and store gone while the embed stage runs
    throwaway_store.process.wait(timeout=10)
    killed_at = time.monotonic()

    def send_failed() -> bool:
        log = worker.log()
        return "could not queue" in log or "raised unexpected: OperationalError" in log

    # The stage ends and its next stage's message cannot be sent (the old code lost the document here).
    wait_until(send_failed, timeout=RUNNING_BOUND, what="the embed stage ending with its next message unsent")
    document = Document.objects.get(pk=document_id)
    assert (document.status, document.stage) == (DocumentStatus.PROCESSING, DocumentStage.EMBED)

    throwaway_store.start()  # same data directory: redis-server is back, its queues from the AOF
    _processed_once(document_id, worker, alice)
    recovered_in = time.monotonic() - killed_at
    wait_until(lambda: not Lease.objects.filter(subject_id=document_id).exists(), timeout=30, what="lease released")
    print(f"redis-server SIGKILLed under a finishing stage: document processed {recovered_in:.1f} s later")


def _upload_hung_then_web_killed(alice, api_key_for, start_web, env: dict[str, str]) -> str:  # type: ignore[no-untyped-def]
    """Upload through a web process whose broker never answers, SIGKILL it once the upload committed (its request
    hangs in the on-commit enqueue). Returns the document's id: charged, pending, its first message never sent."""
    web = start_web(env)
    headers = {"Authorization": f"Bearer {api_key_for(alice)}", "Idempotency-Key": uuid.uuid4().hex}
    answers: list[object] = []

    def upload() -> None:
        try:
            answers.append(
                httpx.post(
                    f"{web.base}{URL}", json={"text": SHORT_TEXT, "title": "Hopper"}, headers=headers, timeout=120
                )
            )
        except httpx.TransportError as exc:
            answers.append(exc)

    client = threading.Thread(target=upload, daemon=True)
    client.start()
    wait_until(lambda: Document.objects.filter(owner=alice).exists(), timeout=60, what="the upload committed")
    assert not answers, answers  # the request is still inside the enqueue
    os.killpg(web.process.pid, signal.SIGKILL)
    web.process.wait(timeout=10)
    client.join(timeout=30)
    assert answers and isinstance(answers[0], httpx.TransportError), answers  # the client never got an answer
    document = Document.objects.get(owner=alice)
    assert (document.status, document.stage) == (DocumentStatus.PENDING, DocumentStage.QUEUED)
    assert _entries(str(document.id)) == [("charge", -document.credits_charged)]
    return str(document.id)


def test_web_killed_between_the_upload_commit_and_its_enqueue_the_sweep_starts_the_document(
    alice, api_key_for, throwaway_store, silent_broker, start_web, start_worker
):
    credits_grant_admin(account=alice, amount=100, actor=None, note="tests")
    env = short_lease_env(EXOGRAPH_LEASE_STUCK="3")
    document_id = _upload_hung_then_web_killed(
        alice, api_key_for, start_web, {**env, **_store_env(throwaway_store), "CELERY_BROKER_URL": silent_broker}
    )
    killed_at = time.monotonic()

    worker = _workers(start_worker, throwaway_store, env)  # what make run's supervisor starts again
    _processed_once(document_id, worker, alice)
    recovered_in = time.monotonic() - killed_at
    assert "expired; resumed" in worker.log()
    print(f"web SIGKILLed between upload commit and enqueue: document processed {recovered_in:.1f} s later")


def test_web_killed_between_the_upload_commit_and_its_enqueue_retry_starts_the_document_at_once(
    alice, api_key_for, throwaway_store, silent_broker, start_web, start_worker
):
    credits_grant_admin(account=alice, amount=100, actor=None, note="tests")
    env = {**short_lease_env(), "EXOGRAPH_LEASE_STUCK": "600"}  # the sweep would wait 10 minutes: retry must not
    document_id = _upload_hung_then_web_killed(
        alice, api_key_for, start_web, {**env, **_store_env(throwaway_store), "CELERY_BROKER_URL": silent_broker}
    )
    worker = _workers(start_worker, throwaway_store, env, beat=False)
    web = start_web({**env, **_store_env(throwaway_store)})  # restarted, with its broker

    response = httpx.post(
        f"{web.base}{URL}{document_id}/retry/", headers={"Authorization": f"Bearer {api_key_for(alice)}"}, timeout=60
    )

    assert response.status_code == 202, response.text
    _processed_once(document_id, worker, alice)  # the retry of a paid document charges nothing
