"""Nothing stuck when a research session's first message is never sent (issue 23): the transaction that creates the
session (and holds its budget) also records its run as due (a research.session lease), so a web process SIGKILLed
between that commit and its on-commit enqueue leaves work the lease sweep starts, not an active session whose hold
stays held for good. Watch-topic runs started by beat go through the same create.

Real parts: uvicorn (its broker a socket that never answers, so the request hangs in the enqueue until the kill),
a prefork `celery worker` and `celery beat` on the session's Redis broker and FalkorDB, this test's database
(SQLite or PostgreSQL); the extractive research provider reads three world articles. Leases are shortened (TTL 4 s,
sweep every 2 s, due work resumed 3 s after it was recorded); the defaults are 30 s / 15 s / 30 s."""

from __future__ import annotations

import os
import signal
import threading
import time
import uuid

import httpx
import pytest
from django.db.models import Sum

from billing.models import CreditEntry, EntryKind, Hold, HoldStatus
from billing.services import credit_balance, credits_grant_admin
from exograph.core.models import Lease
from research.models import ResearchSession, ResearchStatus, ResearchStep
from research.services.running import RESEARCH_LEASE
from tests.faults.conftest import session_stores, short_lease_env, wait_until
from tests.research.conftest import (  # noqa: F401 (fixtures: the World Graph row, world sources)
    _world_row_and_stores,
    quantum_world,
    world_source,
)

pytestmark = [pytest.mark.faults, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

URL = "/api/v1/research/"
# Bounds: the worker's start and the session on a busy 2-core machine, after the fault.
RECOVERY_BOUND = 240


def _ledger(user) -> int:  # type: ignore[no-untyped-def]
    return int(CreditEntry.objects.filter(account__user=user).aggregate(total=Sum("amount"))["total"] or 0)


@pytest.mark.usefixtures("quantum_world")
def test_web_killed_between_the_research_create_commit_and_its_enqueue_the_sweep_runs_the_session(
    alice, api_key_for, silent_broker, start_web, start_worker
):
    credits_grant_admin(account=alice, amount=100, actor=None, note="tests")
    env = short_lease_env(EXOGRAPH_LEASE_STUCK="3", RESEARCH_INGEST_POLL_SECONDS="0.5")
    urls = session_stores()
    web = start_web(
        {
            **env,
            "REDIS_URL": urls["redis_url"],
            "FALKORDB_URL": urls["falkordb_url"],
            "CELERY_BROKER_URL": silent_broker,
        }
    )
    headers = {"Authorization": f"Bearer {api_key_for(alice)}", "Idempotency-Key": uuid.uuid4().hex}
    answers: list[object] = []

    def create() -> None:
        try:
            answers.append(
                httpx.post(
                    f"{web.base}{URL}",
                    json={"query": "quantum error correction with surface codes"},
                    headers=headers,
                    timeout=120,
                )
            )
        except httpx.TransportError as exc:
            answers.append(exc)

    client = threading.Thread(target=create, daemon=True)
    client.start()
    created = ResearchSession.objects.filter(owner=alice)
    wait_until(created.exists, timeout=60, what="the session committed")
    assert not answers, answers  # the request is still inside the enqueue
    os.killpg(web.process.pid, signal.SIGKILL)
    web.process.wait(timeout=10)
    killed_at = time.monotonic()
    client.join(timeout=30)
    assert answers and isinstance(answers[0], httpx.TransportError), answers  # the client never got an answer
    session = created.get()
    assert session.status == ResearchStatus.PENDING and not ResearchStep.objects.filter(session=session).exists()
    assert Hold.objects.get(pk=session.hold_id).status == HoldStatus.OPEN  # its budget is held, its message unsent
    assert credit_balance(account=alice) == 100 - session.budget_credits == _ledger(alice)

    worker = start_worker(**urls, queues="research,ingest,default", extra_env=env)  # what make run's supervisor
    start_worker(**urls, command="beat", extra_env=env)  # starts again, with the lease sweep

    def finished() -> bool:
        assert worker.process.poll() is None, worker.log()[-3000:]
        status = ResearchSession.objects.filter(pk=session.pk).values_list("status", flat=True).first()
        return status in (ResearchStatus.COMPLETED, ResearchStatus.FAILED)

    try:
        wait_until(finished, timeout=RECOVERY_BOUND, what="the session finished", interval=0.5)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; the worker's log:\n{worker.log()[-3000:]}") from None
    recovered_in = time.monotonic() - killed_at
    session.refresh_from_db()
    assert session.status == ResearchStatus.COMPLETED, (session.error, worker.log()[-3000:])
    assert "expired; resumed" in worker.log()  # the sweep started it: nothing else would have
    assert session.report["sources"]
    steps = {s.key: s.credits for s in ResearchStep.objects.filter(session=session)}
    captures = CreditEntry.objects.filter(kind=EntryKind.CAPTURE, hold_id=session.hold_id)
    assert captures.count() == len([v for v in steps.values() if v])  # one capture per priced step: none twice
    hold = Hold.objects.get(pk=session.hold_id)
    assert hold.status == HoldStatus.CLOSED and hold.captured == sum(steps.values()) == session.credits_spent
    assert session.credits_spent <= session.budget_credits
    assert credit_balance(account=alice) == 100 - session.credits_spent == _ledger(alice)
    leased = Lease.objects.filter(kind=RESEARCH_LEASE, subject_id=str(session.pk))
    wait_until(lambda: not leased.exists(), timeout=30, what="the lease released")
    print(f"web SIGKILLed between research create commit and enqueue: session completed {recovered_in:.1f} s later")
