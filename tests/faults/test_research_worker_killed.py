"""Kill the whole worker (SIGKILL, its process group) mid-research: the session's lease expires, celery beat's
sweep queues the session again, a new worker resumes it at the interrupted step and completes it. Every step is
charged once, the budget is never exceeded and the balance equals the ledger, long before the broker's visibility
timeout would have handed the message out again.

Real parts: PostgreSQL (this test's database), the session's Redis broker and FalkorDB, prefork `celery worker`
and `celery beat` subprocesses; the model provider is a loopback fake of the OpenAI Chat Completions API (the
production client path). The lease TTL and sweep interval are shortened (4 s / 2 s) to keep it quick."""

from __future__ import annotations

import os
import signal
import time

import pytest
from django.conf import settings
from django.db.models import Sum

from billing.models import CreditEntry, EntryKind, Hold, HoldStatus
from billing.services import credit_balance, credits_grant_admin
from exograph.core.models import Lease
from research.models import ResearchSession, ResearchSource, ResearchStatus, ResearchStep
from research.services.running import RESEARCH_LEASE
from tests.fakes.llm_chat import SlowSynthesisChatServer
from tests.faults.conftest import session_stores, short_lease_env, tasks_via_broker, wait_until
from tests.research.conftest import (  # noqa: F401 (fixtures: the World Graph row, world sources)
    _world_row_and_stores,
    quantum_world,
    world_source,
)

pytestmark = [pytest.mark.faults, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

RUNNING_BOUND, RECOVERY_BOUND = 240, 240


def _ledger(user) -> int:  # type: ignore[no-untyped-def]
    return int(CreditEntry.objects.filter(account__user=user).aggregate(total=Sum("amount"))["total"] or 0)


@pytest.mark.usefixtures("quantum_world")  # three world articles the local adapter finds
def test_worker_killed_mid_research_the_sweep_resumes_the_session_on_a_new_worker(alice, start_worker):
    from research.services import research_session_create

    credits_grant_admin(account=alice, amount=100, actor=None, note="tests")
    with SlowSynthesisChatServer() as llm:
        env = short_lease_env(
            RESEARCH_INGEST_POLL_SECONDS="0.5",
            RESEARCH_PROVIDER="openai",
            LLM_BASE_URL=llm.base_url,
            LLM_API_KEY=llm.api_key,
            CHAT_SNAP_MODEL="fast-model",
            LLM_TIMEOUT_SECONDS="150",
            LLM_MAX_RETRIES="0",
        )
        urls = session_stores()
        queues = "research,ingest,default"
        first = start_worker(**urls, queues=queues, extra_env=env)
        start_worker(**urls, command="beat", extra_env=env)
        with tasks_via_broker():
            session = research_session_create(actor=alice, query="quantum error correction")
            session_id = str(session.id)

            def synthesising() -> bool:
                assert first.process.poll() is None, first.log()[-3000:]
                return llm.syntheses >= 1

            wait_until(synthesising, timeout=RUNNING_BOUND, what="the synthesis step running", interval=0.1)
            lease = Lease.objects.get(kind=RESEARCH_LEASE, subject_id=session_id)
            assert lease.holder  # a live run holds it
            before = {s.key: s.credits for s in ResearchStep.objects.filter(session=session)}
            assert {"plan", "search:0", "select"} <= set(before)
            assert len([k for k in before if k.startswith("read:")]) == 3
            os.killpg(first.process.pid, signal.SIGKILL)  # the worker and its pool children, mid-session
            first.process.wait(timeout=10)
            killed_at = time.monotonic()
            llm.release.set()  # the fake answers the dead connection
            assert ResearchSession.objects.get(pk=session_id).status == ResearchStatus.RUNNING

            second = start_worker(**urls, queues=queues, extra_env=env)  # what make run's supervisor does

            def finished() -> bool:
                assert second.process.poll() is None, second.log()[-3000:]
                status = ResearchSession.objects.filter(pk=session_id).values_list("status", flat=True).first()
                return status in (ResearchStatus.COMPLETED, ResearchStatus.FAILED)

            wait_until(finished, timeout=RECOVERY_BOUND, what="the interrupted session finished", interval=0.5)
            recovered_in = time.monotonic() - killed_at
    session.refresh_from_db()
    assert session.status == ResearchStatus.COMPLETED, (session.error, second.log()[-3000:])
    assert "expired; resumed" in second.log()  # the sweep resumed it, not the broker's visibility timeout
    assert recovered_in < float(settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"])
    assert llm.syntheses == 2  # the interrupted step ran again ...
    assert sum(1 for r in llm.requests if "Numbered sources" not in str(r.json())) == 1  # ... the plan did not
    steps = {s.key: s.credits for s in ResearchStep.objects.filter(session=session)}
    assert {k: v for k, v in steps.items() if k != "synthesise"} == before  # nothing before it was redone
    captures = CreditEntry.objects.filter(kind=EntryKind.CAPTURE, hold_id=session.hold_id)
    assert captures.count() == len([v for v in steps.values() if v])  # one capture per priced step
    hold = Hold.objects.get(pk=session.hold_id)
    assert hold.status == HoldStatus.CLOSED and hold.captured == sum(steps.values()) == session.credits_spent
    assert session.credits_spent <= session.budget_credits  # the budget was never exceeded
    assert credit_balance(account=alice) == 100 - session.credits_spent == _ledger(alice)
    assert ResearchSource.objects.filter(session=session).count() == 3
    # The last step marks the session completed, then lets its lease go.
    leased = Lease.objects.filter(kind=RESEARCH_LEASE, subject_id=session_id)
    wait_until(lambda: not leased.exists(), timeout=30, what="the lease released")
    print(f"worker SIGKILLed mid-research: session completed {recovered_in:.1f} s later")  # the fault table
