"""SIGTERM the web process (uvicorn, as make run's supervisor or a service manager stops it) with uploads in flight:
in-flight requests finish, and a client that lost its connection retries with the same Idempotency-Key on the
restarted web. Every upload is recorded exactly once and charged exactly once.

Real parts: uvicorn subprocesses on this test's PostgreSQL database, a throwaway FalkorDB/Redis (limiter, broker)."""

from __future__ import annotations

import signal
import threading
import time
import uuid
from typing import Any

import httpx
import pytest

from billing.models import CreditEntry
from billing.services import credit_balance, credits_grant_admin
from exograph.documents.models import Document
from tests.faults.conftest import broker_urls, database_url, wait_until

pytestmark = [pytest.mark.faults, pytest.mark.django_db(transaction=True)]

UPLOADS = 12
TEXT = "Grace Hopper wrote the first compiler, A-0, and worked on COBOL for the United States Navy. " * 120


def test_web_sigterm_with_uploads_in_flight_records_and_charges_each_upload_once(
    alice, api_key_for, throwaway_store, start_web
):
    credits_grant_admin(account=alice, amount=500, actor=None, note="tests")
    before = credit_balance(account=alice)
    redis_url, broker_url = broker_urls(throwaway_store, tcp=False)
    env = {
        "DATABASE_URL": database_url(),
        "REDIS_URL": redis_url,
        "FALKORDB_URL": redis_url,
        "CELERY_BROKER_URL": broker_url,
    }
    web = start_web(env)
    key = api_key_for(alice)
    bases = [web.base]
    restarted = threading.Event()
    outcomes: dict[int, list[Any]] = {i: [] for i in range(UPLOADS)}

    def upload(i: int) -> None:
        body = {"text": f"Upload {i}. {TEXT}", "title": f"Hopper {i}"}
        headers = {"Authorization": f"Bearer {key}", "Idempotency-Key": f"upload-{i}-{uuid.uuid4().hex}"}
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # a client that retries a lost request with its Idempotency-Key
            try:
                response = httpx.post(f"{bases[-1]}/api/v1/documents/", json=body, headers=headers, timeout=60)
            except httpx.TransportError as exc:
                outcomes[i].append(type(exc).__name__)
                restarted.wait(timeout=60)
                continue
            outcomes[i].append(response.status_code)
            if response.status_code in (200, 201):
                outcomes[i].append(response.json()["id"])
                return
            if response.status_code != 503:  # the web shutting down may answer 503; anything else is wrong
                return
            restarted.wait(timeout=60)

    threads = [threading.Thread(target=upload, args=(i,), daemon=True) for i in range(UPLOADS)]
    for thread in threads[: UPLOADS // 2]:
        thread.start()
    wait_until(lambda: Document.objects.filter(owner=alice).exists(), timeout=60, what="a first upload recorded")
    web.process.send_signal(signal.SIGTERM)  # uploads are in flight now
    web.process.wait(timeout=60)
    # and more arrive while it is down (started once it has exited: a draining web may still answer late requests,
    # which left no upload to retry when the machine was fast)
    for thread in threads[UPLOADS // 2 :]:
        thread.start()
    wait_until(lambda: all(outcomes[i] for i in range(UPLOADS // 2, UPLOADS)), timeout=60, what="late uploads tried")
    bases.append(start_web(env).base)  # restarted (the supervisor's job)
    restarted.set()
    for thread in threads:
        thread.join(timeout=150)
        assert not thread.is_alive(), "an upload client hung"

    ids = []
    for i, seen in outcomes.items():
        assert seen and seen[-2] in (200, 201), (i, seen)  # every client got its document in the end
        ids.append(seen[-1])
    documents = list(Document.objects.filter(owner=alice))
    assert sorted(str(d.id) for d in documents) == sorted(ids)  # each upload recorded exactly once
    assert len({d.title for d in documents}) == UPLOADS
    charges = CreditEntry.objects.filter(kind="charge", account__user=alice)
    assert charges.count() == UPLOADS  # and charged exactly once
    for document in documents:
        assert charges.filter(reference__contains=str(document.id)).count() == 1
    assert credit_balance(account=alice) == before - sum(d.credits_charged for d in documents)
    retried = [seen for seen in outcomes.values() if len(seen) > 2]
    assert retried, outcomes  # some uploads met the stopped web and were retried
    print(f"web SIGTERMed with {UPLOADS} uploads in flight: {len(retried)} clients retried; all recorded once")
