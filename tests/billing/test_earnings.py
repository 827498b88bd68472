"""Contributor earnings from WorldQueryRecord rows: once per (querier, contributor, query), capped, async."""

from __future__ import annotations

import pytest

from billing.models import CreditEntry, EntryKind
from billing.services import credit_balance, earnings_pay_for_record
from billing.tasks import earnings_pay_for_record_task, earnings_sweep_task
from exograph.graphs.models import WorldQueryRecord
from tests.billing.conftest import assert_ledger_whole, run_concurrently
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def record(querier, query, *contributors):  # type: ignore[no-untyped-def]
    return WorldQueryRecord.objects.create(querier=querier, query=query, contributor_ids=[c.pk for c in contributors])


def earnings(user):  # type: ignore[no-untyped-def]
    return CreditEntry.objects.filter(account__user=user, kind=EntryKind.EARNING)


def test_contributors_earn_with_the_query_in_the_ledger(alice, bob, charlie, settings):
    settings.BILLING_EARNING_CREDITS = 2
    rec = record(alice, "graphene superconductivity", bob, charlie)
    assert earnings_pay_for_record_task.delay(str(rec.pk)).get() == 2
    entry = earnings(bob).get()
    assert entry.amount == 2 and entry.reference == "query: graphene superconductivity"
    assert entry.counterparty == alice
    assert credit_balance(account=bob) == 2 and credit_balance(account=charlie) == 2
    assert credit_balance(account=alice) == 0  # minted by the platform: the querier pays nothing extra
    rec.refresh_from_db()
    assert rec.paid_at is not None
    assert_ledger_whole(bob)


def test_paying_a_record_twice_pays_once(alice, bob):
    rec = record(alice, "q", bob)
    earnings_pay_for_record(record_id=rec.pk)
    WorldQueryRecord.objects.filter(pk=rec.pk).update(paid_at=None)  # even if the mark were lost
    earnings_pay_for_record(record_id=rec.pk)
    assert earnings(bob).count() == 1


def test_same_query_again_earns_nothing_more(alice, bob):
    earnings_pay_for_record(record_id=record(alice, "Dark  Matter", bob).pk)
    earnings_pay_for_record(record_id=record(alice, "dark matter", bob).pk)
    assert earnings(bob).count() == 1
    earnings_pay_for_record(record_id=record(alice, "dark energy", bob).pk)
    assert earnings(bob).count() == 2


def test_no_self_earnings(alice, bob):
    earnings_pay_for_record(record_id=record(alice, "q", alice, bob).pk)
    assert earnings(alice).count() == 0 and earnings(bob).count() == 1


def test_junk_and_missing_contributor_ids_are_skipped(alice, bob):
    rec = WorldQueryRecord.objects.create(querier=alice, query="q", contributor_ids=[bob.pk, "x", None, 999999, True])
    assert len(earnings_pay_for_record(record_id=rec.pk)) == 1


def test_daily_cap_per_pair(alice, bob, charlie, settings):
    settings.BILLING_EARNING_DAILY_CAP_PER_PAIR = 2
    for i in range(4):
        earnings_pay_for_record(record_id=record(alice, f"q{i}", bob).pk)
    assert earnings(bob).count() == 2
    earnings_pay_for_record(record_id=record(charlie, "q0", bob).pk)  # another querier still pays
    assert earnings(bob).count() == 3


def test_daily_cap_per_contributor(bob, settings):
    settings.BILLING_EARNING_DAILY_CAP_PER_CONTRIBUTOR = 3
    for i in range(5):
        earnings_pay_for_record(record_id=record(UserFactory(), f"q{i}", bob).pk)
    assert earnings(bob).count() == 3
    assert WorldQueryRecord.objects.filter(paid_at__isnull=True).count() == 0


def test_sweep_pays_unpaid_records(alice, bob, charlie):
    record(alice, "a", bob)
    record(charlie, "b", bob)
    assert earnings_sweep_task.delay().get() == 2
    assert earnings(bob).count() == 2
    assert earnings_sweep_task.delay().get() == 0


def test_vanished_record_is_a_no_op():
    assert earnings_pay_for_record(record_id="00000000-0000-0000-0000-000000000000") == []
    assert earnings_pay_for_record(record_id="not-a-uuid") == []


@pytest.mark.django_db(transaction=True)
def test_concurrent_payers_respect_the_cap_exactly(settings):
    settings.BILLING_EARNING_DAILY_CAP_PER_CONTRIBUTOR = 5
    contributor = UserFactory()
    records = [record(UserFactory(), f"q{i}", contributor) for i in range(12)]
    run_concurrently(lambda i: earnings_pay_for_record(record_id=records[i % 12].pk), 24, workers=12)
    assert earnings(contributor).count() == 5
    assert_ledger_whole(contributor)
