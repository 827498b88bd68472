"""The research session lease (kind research.session): a session interrupted more often than the kind allows is
failed by the sweep with a reason, its hold released and its balance equal to its ledger; a duplicate delivery of
a session whose live run holds the lease does nothing. (The worker-killed resume is test_research_worker_killed.)"""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.db.models import Sum
from django.utils import timezone

from billing.models import CreditEntry, EntryKind, Hold, HoldStatus
from billing.services import credit_balance, credits_grant_admin
from exograph.core.leases import lease_hold, leases_sweep
from exograph.core.models import Lease
from research.models import ResearchSession, ResearchStatus, ResearchStep
from research.services import STOPPED, research_session_create, research_session_run
from research.services.running import RESEARCH_LEASE
from tests.research.conftest import _world_row_and_stores  # noqa: F401 (the World Graph row; stores dropped)

pytestmark = [pytest.mark.faults, pytest.mark.django_db]


def _ledger(user) -> int:  # type: ignore[no-untyped-def]
    return int(CreditEntry.objects.filter(account__user=user).aggregate(total=Sum("amount"))["total"] or 0)


def _queued_session(user) -> ResearchSession:  # type: ignore[no-untyped-def]
    """A session created inside the test transaction: its on-commit task send never runs."""
    session = research_session_create(actor=user, query="quantum error correction with surface codes")
    assert session.status == ResearchStatus.PENDING and session.hold_id is not None
    return session


def _interrupted(session: ResearchSession, *, recoveries: int) -> None:
    """The state a SIGKILLed worker leaves: running, its lease held by a dead runner and expired."""
    ResearchSession.objects.filter(pk=session.pk).update(status=ResearchStatus.RUNNING, step="read")
    past = timezone.now() - timedelta(seconds=5)
    Lease.objects.update_or_create(  # over the due lease its creation recorded
        kind=RESEARCH_LEASE,
        subject_id=str(session.pk),
        defaults={
            "step": "read",
            "holder": "gone-host:4242",
            "token": uuid.uuid4(),
            "expires_at": past,
            "heartbeat_at": past,
            "recoveries": recoveries,
        },
    )


def test_a_session_interrupted_more_than_max_recoveries_is_failed_with_its_hold_released(alice, charlie):
    credits_grant_admin(account=alice, amount=100, actor=None, note="tests")
    credits_grant_admin(account=charlie, amount=100, actor=None, note="tests")
    session = _queued_session(alice)
    other = _queued_session(charlie)  # charlie's own session, interrupted once only: resumable, left running
    held = Hold.objects.get(pk=session.hold_id)
    assert credit_balance(account=alice) == 100 - held.amount
    _interrupted(session, recoveries=2)  # the kind's max_recoveries: this interruption is one too many

    counts = leases_sweep()

    assert counts.get("given_up") == 1, counts
    session.refresh_from_db()
    assert session.status == ResearchStatus.FAILED
    assert "interrupted 3 times" in session.error and "during read" in session.error
    assert "released" in session.error
    hold = Hold.objects.get(pk=session.hold_id)
    assert hold.status != HoldStatus.OPEN
    assert not Lease.objects.filter(kind=RESEARCH_LEASE, subject_id=str(session.pk)).exists()
    assert hold.captured == 0  # no step had run: nothing stays paid
    assert not CreditEntry.objects.filter(hold_id=session.hold_id, kind=EntryKind.CAPTURE).exists()
    assert credit_balance(account=alice) == 100 == _ledger(alice)
    # Charlie's session was not touched by alice's give-up (its due lease, recorded at creation, is not expired).
    other.refresh_from_db()
    assert other.status == ResearchStatus.PENDING
    assert credit_balance(account=charlie) == _ledger(charlie)


def test_a_finished_session_leaves_no_lease_and_the_sweep_drops_a_stale_one(alice):
    credits_grant_admin(account=alice, amount=100, actor=None, note="tests")
    session = _queued_session(alice)
    _interrupted(session, recoveries=0)
    ResearchSession.objects.filter(pk=session.pk).update(status=ResearchStatus.CANCELLED)

    assert leases_sweep().get("dropped") == 1
    assert not Lease.objects.filter(kind=RESEARCH_LEASE).exists()


def test_a_duplicate_delivery_skips_a_session_whose_live_run_holds_the_lease(alice):
    credits_grant_admin(account=alice, amount=100, actor=None, note="tests")
    session = _queued_session(alice)
    with lease_hold(kind=RESEARCH_LEASE, subject_id=str(session.pk), step="plan"):  # a live runner (this process)
        assert research_session_run(session_id=str(session.pk)) == STOPPED
    session.refresh_from_db()
    assert session.status == ResearchStatus.PENDING  # untouched: not started, not failed
    assert not ResearchStep.objects.filter(session=session).exists()
    assert Hold.objects.get(pk=session.hold_id).status == HoldStatus.OPEN
