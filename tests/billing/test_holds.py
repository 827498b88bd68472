"""Holds: reserve, capture in parts, release the rest; stale holds released by the periodic task."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from billing.models import CreditEntry, EntryKind, Hold, HoldStatus
from billing.services import credit_balance, credits_capture, credits_hold, credits_hold_touch, credits_release
from billing.tasks import holds_release_stale_task
from exograph.core.errors import Conflict, InsufficientCredits, ValidationError
from tests.billing.conftest import account_of, assert_ledger_whole, run_concurrently
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_hold_captured_in_parts_then_released_is_exact(alice, fund):
    fund(alice, 150)
    hold = credits_hold(account=alice, amount=100, idempotency_key="research-1", reference="research 1")
    assert (credit_balance(account=alice), account_of(alice).held) == (50, 100)
    credits_capture(hold=hold, amount=30, idempotency_key="step-1")
    credits_capture(hold=hold, amount=25, idempotency_key="step-2")
    assert (credit_balance(account=alice), account_of(alice).held) == (50, 45)
    credits_release(hold=hold)
    hold.refresh_from_db()
    assert (hold.captured, hold.released, hold.status) == (55, 45, HoldStatus.CLOSED)
    assert (credit_balance(account=alice), account_of(alice).held) == (95, 0)
    kinds = list(CreditEntry.objects.filter(hold=hold).order_by("id").values_list("kind", "amount", "held_change"))
    assert kinds == [
        (EntryKind.HOLD, -100, 100),
        (EntryKind.CAPTURE, 0, -30),
        (EntryKind.CAPTURE, 0, -25),
        (EntryKind.RELEASE, 45, -45),
    ]
    assert_ledger_whole(alice)
    credits_release(hold=hold)  # releasing again changes nothing
    assert credit_balance(account=alice) == 95
    with pytest.raises(Conflict):
        credits_capture(hold=hold, amount=1, idempotency_key="step-3")


def test_hold_over_balance_is_402_and_changes_nothing(alice, fund):
    fund(alice, 50)
    with pytest.raises(InsufficientCredits) as caught:
        credits_hold(account=alice, amount=51, idempotency_key="too-big")
    assert caught.value.status == 402 and caught.value.extra == {"needed": 51, "balance": 50}
    assert not Hold.objects.exists()
    assert credit_balance(account=alice) == 50 and account_of(alice).held == 0
    assert_ledger_whole(alice)


def test_hold_is_idempotent_per_key(alice, fund):
    fund(alice, 100)
    first = credits_hold(account=alice, amount=40, idempotency_key="r")
    again = credits_hold(account=alice, amount=40, idempotency_key="r")
    assert first.pk == again.pk and credit_balance(account=alice) == 60


def test_capture_with_key_happens_once(alice, fund):
    fund(alice, 100)
    hold = credits_hold(account=alice, amount=40, idempotency_key="r")
    credits_capture(hold=hold, amount=10, idempotency_key="step-1")
    credits_capture(hold=hold, amount=10, idempotency_key="step-1")
    hold.refresh_from_db()
    assert hold.captured == 10


@pytest.mark.parametrize("amount", [0, -5, 2.5, True])
def test_zero_negative_or_fractional_amounts_are_400(alice, fund, amount):
    fund(alice, 100)
    with pytest.raises(ValidationError):
        credits_hold(account=alice, amount=amount, idempotency_key="x")
    hold = credits_hold(account=alice, amount=10, idempotency_key="ok")
    with pytest.raises(ValidationError):
        credits_capture(hold=hold, amount=amount, idempotency_key="step-1")
    assert credit_balance(account=alice) == 90 and account_of(alice).held == 10


def test_capture_more_than_remains_is_400(alice, fund):
    fund(alice, 100)
    hold = credits_hold(account=alice, amount=10, idempotency_key="r")
    credits_capture(hold=hold, amount=8, idempotency_key="step-1")
    with pytest.raises(ValidationError) as caught:
        credits_capture(hold=hold, amount=3, idempotency_key="step-2")
    assert "2 remain" in caught.value.message
    assert_ledger_whole(alice)


def test_stale_holds_are_released_by_the_periodic_task(alice, fund, settings):
    fund(alice, 100)
    stale = credits_hold(account=alice, amount=30, idempotency_key="old")
    credits_capture(hold=stale, amount=10, idempotency_key="step-1")
    fresh = credits_hold(account=alice, amount=20, idempotency_key="new")
    Hold.objects.filter(pk=stale.pk).update(
        last_activity_at=timezone.now() - timedelta(seconds=settings.BILLING_HOLD_STALE_SECONDS + 5)
    )
    assert holds_release_stale_task.delay().get() == 1
    stale.refresh_from_db()
    fresh.refresh_from_db()
    assert stale.status == HoldStatus.CLOSED and stale.released == 20
    assert fresh.status == HoldStatus.OPEN
    assert (credit_balance(account=alice), account_of(alice).held) == (70, 20)
    assert_ledger_whole(alice)


def test_capture_without_a_stable_key_is_refused_and_a_retried_capture_spends_once(alice, fund):
    fund(alice, 100)
    hold = credits_hold(account=alice, amount=40, idempotency_key="research:7")
    for key in ["", "   "]:
        with pytest.raises(ValidationError) as caught:
            credits_capture(hold=hold, amount=10, idempotency_key=key)
        assert caught.value.code == "invalid_idempotency_key"
    with pytest.raises(TypeError):
        credits_capture(hold=hold, amount=10)  # type: ignore[call-arg]  # the key is required
    hold.refresh_from_db()
    assert hold.captured == 0
    for _ in range(3):  # a task retried after a crash captures its step once
        credits_capture(hold=Hold.objects.get(pk=hold.pk), amount=10, idempotency_key="research:7:step:1")
    hold.refresh_from_db()
    assert hold.captured == 10 and account_of(alice).held == 30
    assert_ledger_whole(alice)


def test_touched_hold_survives_the_stale_sweep(alice, fund, settings):
    fund(alice, 100)
    working = credits_hold(account=alice, amount=30, idempotency_key="long-research")
    idle = credits_hold(account=alice, amount=20, idempotency_key="abandoned")
    long_ago = timezone.now() - timedelta(seconds=settings.BILLING_HOLD_STALE_SECONDS + 5)
    Hold.objects.filter(pk__in=[working.pk, idle.pk]).update(last_activity_at=long_ago)
    credits_hold_touch(hold=working)  # still working, nothing captured yet
    assert holds_release_stale_task.delay().get() == 1
    working.refresh_from_db()
    idle.refresh_from_db()
    assert working.status == HoldStatus.OPEN and working.remaining == 30
    assert idle.status == HoldStatus.CLOSED and idle.released == 20
    assert (credit_balance(account=alice), account_of(alice).held) == (70, 30)
    with pytest.raises(Conflict) as caught:
        credits_hold_touch(hold=idle)
    assert caught.value.code == "hold_closed"
    assert_ledger_whole(alice)


def test_capture_the_ledger_cannot_apply_raises_and_changes_nothing(alice, fund):
    """An invariant check that survives python -O: a raise, not an assert."""
    from billing.models import CreditAccount
    from billing.services.ledger import LedgerInvariantError

    fund(alice, 100)
    hold = credits_hold(account=alice, amount=40, idempotency_key="r")
    CreditAccount.objects.filter(user=alice).update(held=0)  # a hand-edited row: held no longer covers the hold
    with pytest.raises(LedgerInvariantError):
        credits_capture(hold=hold, amount=10, idempotency_key="step-1")
    hold.refresh_from_db()
    assert hold.captured == 0 and not CreditEntry.objects.filter(kind=EntryKind.CAPTURE).exists()


def test_setup_periodic_tasks_validates_the_schedule():
    out = io.StringIO()
    call_command("setup_periodic_tasks", stdout=out)
    assert "billing.tasks.holds_release_stale_task" in out.getvalue()
    assert "billing.tasks.earnings_sweep_task" in out.getvalue()


def test_hold_is_visible_to_its_owner_only(alice, fund, alice_client, charlie_client):
    fund(alice, 100)
    hold = credits_hold(account=alice, amount=30, idempotency_key="r")
    mine = alice_client.get(f"/api/v1/billing/holds/{hold.pk}/")
    assert mine.status_code == 200 and mine.json()["remaining"] == 30
    foreign = charlie_client.get(f"/api/v1/billing/holds/{hold.pk}/")
    assert foreign.status_code == 404 and foreign.json()["error"]["code"] == "not_found"
    assert charlie_client.get("/api/v1/billing/holds/not-a-uuid/").status_code == 404


@pytest.mark.django_db(transaction=True)
def test_concurrent_captures_never_exceed_the_hold(fund):
    user = UserFactory()
    fund(user, 100)
    hold = credits_hold(account=user, amount=50, idempotency_key="r")
    results = run_concurrently(
        lambda i: credits_capture(hold=Hold.objects.get(pk=hold.pk), amount=7, idempotency_key=f"step-{i}"),
        20,
        workers=20,
    )
    assert sum(status == "ok" for status, _ in results) == 7  # 7 × 7 = 49 ≤ 50 < 56
    hold.refresh_from_db()
    assert hold.captured == 49
    credits_release(hold=hold)
    assert credit_balance(account=user) == 51
    assert_ledger_whole(user)
