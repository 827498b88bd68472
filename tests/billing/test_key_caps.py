"""Monthly credit caps of API keys, in the ledger: what counts, what is refused, and that concurrency never overruns."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db.models import Sum

from billing.models import CreditEntry, EntryKind
from billing.services import credit_balance, credits_charge, credits_hold, credits_refund, credits_release
from billing.services.caps import KeyCapReached, key_spent_this_month, month_start, next_month_start, spending_key
from exograph.accounts.services import api_key_create, api_key_update
from exograph.core.errors import InsufficientCredits, ValidationError
from tests.billing.conftest import assert_ledger_whole, run_concurrently
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def _key(user, cap=None):  # type: ignore[no-untyped-def]
    return api_key_create(actor=user, name="agent", monthly_credit_cap=cap).key


def test_month_boundaries_are_utc_calendar_months():
    assert month_start(datetime(2026, 12, 31, 23, 59, tzinfo=UTC)) == datetime(2026, 12, 1, tzinfo=UTC)
    assert next_month_start(datetime(2026, 12, 31, 23, 59, tzinfo=UTC)) == datetime(2027, 1, 1, tzinfo=UTC)
    assert next_month_start(datetime(2027, 1, 31, 12, tzinfo=UTC)) == datetime(2027, 2, 1, tzinfo=UTC)


def test_spends_are_recorded_against_the_key_even_without_a_cap(alice, fund):
    fund(alice, 100)
    key = _key(alice)
    with spending_key(key_id=key.pk, capped=False):
        credits_charge(account=alice, action="chat.ponder", idempotency_key="m1")
    credits_charge(account=alice, action="chat.snap", idempotency_key="web")  # no key: the web UI, a task
    entries = CreditEntry.objects.filter(account__user=alice, kind=EntryKind.CHARGE)
    assert {(e.api_key_id, e.amount) for e in entries} == {(key.pk, -10), (None, -3)}
    assert key_spent_this_month(key_ids=[key.pk]) == {key.pk: 10}


def test_a_charge_past_the_cap_is_refused_naming_cap_spent_left_and_reset(alice, fund):
    fund(alice, 100)
    key = _key(alice, cap=12)
    with spending_key(key_id=key.pk, capped=True):
        credits_charge(account=alice, action="chat.ponder", idempotency_key="m1")
        with pytest.raises(KeyCapReached) as refused:
            credits_charge(account=alice, action="chat.snap", idempotency_key="m2")
    error = refused.value
    assert (error.status, error.code) == (403, "key_monthly_cap_reached")
    assert error.message == (
        "This API key's monthly credit cap is 12 credits; 10 were spent this month, 2 left, and this needs 3."
    )
    assert "Raise the key's monthly cap" in error.hint and f"{next_month_start():%Y-%m-%d}" in error.hint
    assert {k: error.extra[k] for k in ("monthly_credit_cap", "spent_this_month", "remaining", "needed")} == {
        "monthly_credit_cap": 12,
        "spent_this_month": 10,
        "remaining": 2,
        "needed": 3,
    }
    assert credit_balance(account=alice) == 90  # nothing charged by the refused call
    assert_ledger_whole(alice)


def test_exactly_the_cap_is_allowed_and_a_retry_at_the_cap_returns_its_first_result(alice, fund):
    fund(alice, 100)
    key = _key(alice, cap=6)
    with spending_key(key_id=key.pk, capped=True):
        first = credits_charge(account=alice, action="chat.snap", idempotency_key="a")
        second = credits_charge(account=alice, action="chat.snap", idempotency_key="b")
        retry = credits_charge(account=alice, action="chat.snap", idempotency_key="b")
    assert (first.balance, second.balance) == (97, 94)
    assert retry.entry is not None and second.entry is not None and retry.entry.pk == second.entry.pk
    assert credit_balance(account=alice) == 94


def test_refunds_give_the_spend_back_to_the_key_this_month(alice, fund):
    fund(alice, 100)
    key = _key(alice, cap=10)
    with spending_key(key_id=key.pk, capped=True):
        credits_charge(account=alice, action="chat.ponder", idempotency_key="m1")
    credits_refund(account=alice, charge_key="m1", reason="provider failed")  # e.g. in a task: no key current
    assert key_spent_this_month(key_ids=[key.pk]) == {key.pk: 0}
    with spending_key(key_id=key.pk, capped=True):
        credits_charge(account=alice, action="chat.ponder", idempotency_key="m2")  # the cap is free again


def test_last_months_spend_does_not_count_and_its_late_refund_gives_nothing_back(alice, fund):
    fund(alice, 100)
    key = _key(alice, cap=10)
    with spending_key(key_id=key.pk, capped=True):
        credits_charge(account=alice, action="chat.ponder", idempotency_key="old")
    last_month = month_start() - timedelta(days=3)
    CreditEntry.objects.filter(api_key_id=key.pk).update(created=last_month)  # as if charged then
    assert key_spent_this_month(key_ids=[key.pk]) == {key.pk: 0}
    credits_refund(account=alice, charge_key="old", reason="late refund")
    refund = CreditEntry.objects.get(account__user=alice, kind=EntryKind.REFUND)
    assert refund.api_key_id is None  # a refund of a closed month does not widen this month's cap
    with spending_key(key_id=key.pk, capped=True):
        credits_charge(account=alice, action="chat.ponder", idempotency_key="new")
        with pytest.raises(KeyCapReached):
            credits_charge(account=alice, action="chat.snap", idempotency_key="newer")


def test_holds_count_in_full_and_their_release_gives_back_the_rest(alice, fund):
    fund(alice, 200)
    key = _key(alice, cap=100)
    with spending_key(key_id=key.pk, capped=True):
        with pytest.raises(KeyCapReached) as refused:
            credits_hold(account=alice, amount=101, idempotency_key="too-big")
        hold = credits_hold(account=alice, amount=60, idempotency_key="r1")
        with pytest.raises(KeyCapReached):
            credits_hold(account=alice, amount=41, idempotency_key="r2")
    assert refused.value.extra["remaining"] == 100
    from billing.services import credits_capture

    credits_capture(hold=hold, amount=25, idempotency_key="step1")
    credits_release(hold=hold, reason="done")  # in a task: no key current, still the key's release
    assert key_spent_this_month(key_ids=[key.pk]) == {key.pk: 25}
    assert credit_balance(account=alice) == 175
    assert_ledger_whole(alice)


def test_a_refund_of_a_holds_captures_gives_the_key_its_cap_back(alice, fund):
    # A hold spent in full (e.g. a research session's steps), then refunded because the work failed on our side:
    # the key may spend its whole cap again, and the refund never gives back more than was captured.
    from billing.services import credits_capture, credits_hold_refund

    fund(alice, 100)
    key = _key(alice, cap=30)
    with spending_key(key_id=key.pk, capped=True):
        hold = credits_hold(account=alice, amount=30, idempotency_key="session-1")
    credits_capture(hold=hold, amount=20, idempotency_key="step1")
    credits_release(hold=hold, reason="failed")  # in a task: no key current
    assert key_spent_this_month(key_ids=[key.pk]) == {key.pk: 20}
    with pytest.raises(ValidationError) as too_much:
        credits_hold_refund(hold=hold, amount=21, idempotency_key="r", reason="failed")
    assert too_much.value.code == "refund_exceeds_captured"
    refund = credits_hold_refund(hold=hold, amount=20, idempotency_key="r", reason="failed")
    assert credits_hold_refund(hold=hold, amount=20, idempotency_key="r", reason="failed").pk == refund.pk  # once
    assert (refund.kind, refund.amount, refund.api_key_id, refund.hold_id) == (EntryKind.REFUND, 20, key.pk, hold.pk)
    assert key_spent_this_month(key_ids=[key.pk]) == {key.pk: 0}
    with spending_key(key_id=key.pk, capped=True):
        credits_hold(account=alice, amount=30, idempotency_key="session-2")  # the whole cap again
    assert credit_balance(account=alice) == 70
    assert_ledger_whole(alice)


def test_a_cap_set_mid_month_counts_what_the_key_already_spent(alice, fund):
    fund(alice, 100)
    key = _key(alice)
    with spending_key(key_id=key.pk, capped=False):
        credits_charge(account=alice, action="chat.ponder", idempotency_key="m1")
    api_key_update(actor=alice, key_id=key.pk, monthly_credit_cap=12)
    with spending_key(key_id=key.pk, capped=True), pytest.raises(KeyCapReached) as refused:
        credits_charge(account=alice, action="chat.snap", idempotency_key="m2")
    assert refused.value.extra["spent_this_month"] == 10


def test_insufficient_credits_still_answers_402_under_a_cap(alice, fund):
    fund(alice, 2)
    key = _key(alice, cap=100)
    with spending_key(key_id=key.pk, capped=True), pytest.raises(InsufficientCredits):
        credits_charge(account=alice, action="chat.snap", idempotency_key="m1")


@pytest.mark.django_db(transaction=True)
def test_concurrent_charges_of_one_capped_key_never_overrun_its_cap(fund):
    user = UserFactory()
    fund(user, 1000)
    key = _key(user, cap=31)

    def charge(i: int) -> int:
        with spending_key(key_id=key.pk, capped=True):
            return credits_charge(account=user, action="chat.snap", idempotency_key=f"c{i}").balance

    results = run_concurrently(charge, 40, workers=20)
    ok = [r for status, r in results if status == "ok"]
    refused = [r for status, r in results if status == "err"]
    assert len(ok) == 10  # 10 × 3 = 30 ≤ 31; an 11th would make 33
    assert len(refused) == 30 and all(isinstance(e, KeyCapReached) for e in refused), refused[:3]
    assert key_spent_this_month(key_ids=[key.pk]) == {key.pk: 30}
    spent = CreditEntry.objects.filter(api_key_id=key.pk).aggregate(s=Sum("amount"))["s"]
    assert spent == -30 and credit_balance(account=user) == 970
    assert_ledger_whole(user)


@pytest.mark.django_db(transaction=True)
def test_concurrent_holds_and_charges_of_one_capped_key_never_overrun_its_cap(fund):
    user = UserFactory()
    fund(user, 1000)
    key = _key(user, cap=50)

    def spend(i: int) -> str:
        with spending_key(key_id=key.pk, capped=True):
            if i % 2:
                credits_hold(account=user, amount=7, idempotency_key=f"h{i}")
            else:
                credits_charge(account=user, action="chat.snap", idempotency_key=f"c{i}")
        return "ok"

    results = run_concurrently(spend, 30, workers=15)
    assert all(status == "ok" or isinstance(r, KeyCapReached) for status, r in results), results
    succeeded = [i for i, (status, _) in enumerate(results) if status == "ok"]
    spent = key_spent_this_month(key_ids=[key.pk])[key.pk]
    assert spent == sum(7 if i % 2 else 3 for i in succeeded)
    # 150 credits were asked for: something was refused, so less than a hold (7) is left, and never below 0.
    assert 50 - 7 < spent <= 50
    assert credit_balance(account=user) == 1000 - spent
    assert_ledger_whole(user)


def test_a_chat_message_the_documents_do_not_answer_is_refunded_to_the_keys_cap_too(alice, fund):
    # Over REST with a capped key: an unanswered message is refunded, so the key may ask again and again.
    from rest_framework.test import APIClient

    fund(alice, 100)
    created = api_key_create(actor=alice, name="agent", monthly_credit_cap=3)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {created.secret}")
    for question in ("Who won the 1986 world cup?", "Which river is the longest in Peru?"):
        response = client.post("/api/v1/chat/messages/", {"message": question}, format="json")
        assert response.status_code == 201, response.json()
        assert response.json()["usage"]["credits_refunded"] == 3
    assert key_spent_this_month(key_ids=[created.key.pk]) == {created.key.pk: 0}
    assert credit_balance(account=alice) == 100
