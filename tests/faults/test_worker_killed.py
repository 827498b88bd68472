"""Kill the worker (SIGKILL, its whole process group) while it runs a document's stage: the stage lease expires,
celery beat's sweep queues the stage again, a new worker finishes it. Processed, paid exactly once, within a bound.

Real parts: PostgreSQL (this test's database), the session's Redis broker and FalkorDB, a prefork `celery worker`
and `celery beat` as subprocesses. The lease TTL and sweep interval are shortened (4 s / 2 s) to keep it quick;
the defaults (30 s / 15 s) resume within 45 s."""

from __future__ import annotations

import os
import signal
import time

import pytest

from billing.models import CreditEntry
from billing.services import credit_balance, credits_grant_admin
from exograph.core.models import Lease
from exograph.documents.models import Document, DocumentStatus
from exograph.documents.services.state import DOCUMENT_LEASE, EMBED_TASK
from exograph.graphs import store
from exograph.graphs.models import Graph
from tests.faults.conftest import session_stores, short_lease_env, tasks_via_broker, wait_until

pytestmark = [pytest.mark.faults, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

TEXT = "\n\n".join(
    f"Section {i}. Ada Lovelace wrote about the Analytical Engine designed by Charles Babbage in London. "
    f"Her notes on Bernoulli numbers, part {i}, are read as the first published program."
    for i in range(60)
)
# Bounds: model load and the 60-section document on a busy 2-core machine, once per worker.
RUNNING_BOUND, RECOVERY_BOUND = 180, 240


def test_worker_killed_mid_stage_the_document_is_resumed_and_paid_once(alice, alice_client, start_worker):
    credits_grant_admin(account=alice, amount=100, actor=None, note="tests")
    env, urls = short_lease_env(), session_stores()
    first = start_worker(**urls, queues="ingest,default", extra_env=env)
    start_worker(**urls, command="beat", extra_env=env)
    try:
        with tasks_via_broker():
            response = alice_client.post("/api/v1/documents/", {"text": TEXT, "title": "Lovelace notes"}, format="json")
            assert response.status_code == 201, response.json()
            document_id, price = response.json()["id"], response.json()["credits_charged"]
            assert credit_balance(account=alice) == 100 - price

            held = Lease.objects.filter(kind=DOCUMENT_LEASE, subject_id=document_id, step=EMBED_TASK).exclude(holder="")

            def stage_running() -> bool:
                assert first.process.poll() is None, first.log()[-3000:]
                return held.exists()

            # The embed stage (the model's load, then 60 sections): long enough that the kill lands inside it. Parse
            # of a text is over in a few ms, and a kill just after it ends finds no stage running: the next stage's
            # message, reserved by the dead worker, then waits for the broker's visibility timeout instead.
            wait_until(stage_running, timeout=RUNNING_BOUND, what="the embed stage running", interval=0.05)
            os.killpg(first.process.pid, signal.SIGKILL)  # the worker and its pool children, mid-stage
            first.process.wait(timeout=10)
            killed_at = time.monotonic()
            assert Document.objects.get(pk=document_id).status == DocumentStatus.PROCESSING
            assert held.exists(), "the kill landed after the embed stage ended, not inside it"

            second = start_worker(**urls, queues="ingest,default", extra_env=env)  # what make run's supervisor does

            def finished() -> bool:
                assert second.process.poll() is None, second.log()[-3000:]
                return Document.objects.get(pk=document_id).status in (DocumentStatus.PROCESSED, DocumentStatus.FAILED)

            try:
                wait_until(finished, timeout=RECOVERY_BOUND, what="the interrupted document finished", interval=0.5)
            except AssertionError as exc:
                raise AssertionError(f"{exc}; the new worker's log:\n{second.log()[-3000:]}") from None
            recovered_in = time.monotonic() - killed_at
            document = Document.objects.get(pk=document_id)
            assert document.status == DocumentStatus.PROCESSED, (document.failure_reason, second.log()[-3000:])
            assert "expired; resumed" in second.log()
            entries = list(CreditEntry.objects.filter(reference__contains=document_id).values_list("kind", "amount"))
            assert entries == [("charge", -price)]  # paid exactly once, nothing refunded
            assert credit_balance(account=alice) == 100 - price
            # The last stage marks the document processed, then lets its lease go.
            wait_until(
                lambda: not Lease.objects.filter(subject_id=document_id).exists(), timeout=30, what="the lease released"
            )
            print(f"worker SIGKILLed mid-stage: document processed {recovered_in:.1f} s later")  # the fault table
    finally:
        for graph_id in Graph.objects.values_list("id", flat=True):
            store.store_drop(f"exo:{graph_id}")
