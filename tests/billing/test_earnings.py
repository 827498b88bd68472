"""Contributor earnings from WorldUsage rows: once per (querier, contributor, query), capped, async, private."""

from __future__ import annotations

import pytest

from billing.models import CreditEntry, EntryKind, UsageSource, WorldUsage
from billing.services import credit_balance, earnings_pay_for_record, earnings_query_digest, earnings_record
from billing.tasks import earnings_pay_for_record_task, earnings_sweep_task
from exograph.core.errors import ValidationError
from tests.billing.conftest import assert_ledger_whole, run_concurrently
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def record(querier, query, *contributors):  # type: ignore[no-untyped-def]
    return WorldUsage.objects.create(
        querier=querier,
        query_digest=earnings_query_digest(query),
        source=UsageSource.SEARCH,
        contributor_ids=[c.pk for c in contributors],
    )


def earnings(user):  # type: ignore[no-untyped-def]
    return CreditEntry.objects.filter(account__user=user, kind=EntryKind.EARNING)


def test_contributors_earn_under_a_neutral_reference_never_the_query(alice, bob, charlie, settings):
    settings.BILLING_EARNING_CREDITS = 2
    rec = record(alice, "graphene superconductivity", bob, charlie)
    assert earnings_pay_for_record_task.delay(str(rec.pk)).get() == 2
    entry = earnings(bob).get()
    assert entry.amount == 2 and entry.reference == "world knowledge used"
    assert "graphene" not in entry.idempotency_key
    assert entry.counterparty == alice
    assert credit_balance(account=bob) == 2 and credit_balance(account=charlie) == 2
    assert credit_balance(account=alice) == 0  # minted by the platform: the querier pays nothing extra
    rec.refresh_from_db()
    assert rec.paid_at is not None
    assert_ledger_whole(bob)


def test_paying_a_record_twice_pays_once(alice, bob):
    rec = record(alice, "q", bob)
    earnings_pay_for_record(record_id=rec.pk)
    WorldUsage.objects.filter(pk=rec.pk).update(paid_at=None)  # even if the mark were lost
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
    rec = WorldUsage.objects.create(
        querier=alice,
        query_digest=earnings_query_digest("q"),
        source="search",
        contributor_ids=[bob.pk, "x", None, 999999, True],
    )
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
    assert WorldUsage.objects.filter(paid_at__isnull=True).count() == 0


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


def test_earnings_record_keeps_only_a_keyed_digest_and_pays_after_commit(
    alice, bob, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        usage = earnings_record(
            querier=alice, query="  Graphene   SUPERCONDUCTIVITY ", contributor_ids=[bob.pk, alice.pk], source="chat"
        )
    assert usage is not None and len(callbacks) == 1
    usage.refresh_from_db()
    assert usage.paid_at is not None and usage.contributor_ids == [bob.pk] and usage.source == "chat"
    assert usage.query_digest == earnings_query_digest("graphene superconductivity")
    assert "graphene" not in str(WorldUsage.objects.values().get(pk=usage.pk)).lower()
    import hashlib

    plain = hashlib.sha256(b"graphene superconductivity").hexdigest()
    assert usage.query_digest != plain  # keyed: a guess cannot be checked without SECRET_KEY
    # The same question again (here as a digest, as chat may send it) earns nothing more.
    again = earnings_record(
        querier=alice, query_digest=usage.query_digest, contributor_ids=[bob.pk], source=UsageSource.RESEARCH
    )
    assert again is not None
    earnings_pay_for_record(record_id=again.pk)
    assert earnings(bob).count() == 1


def test_a_broker_down_after_commit_leaves_the_record_for_the_sweep_and_fails_nothing(
    alice, bob, django_capture_on_commit_callbacks, monkeypatch, caplog
):
    """The answer or research step that used world knowledge is committed; its contributors' payment is sent after
    commit. A broker that is down then (kombu's OperationalError) must not fail that step: the sweep pays later."""
    from kombu.exceptions import OperationalError

    def broker_down(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise OperationalError("Error 2 connecting to /tmp/gone/falkordb.sock. No such file or directory.")

    from billing.services import earnings as earnings_module

    real = earnings_module.celery_app.signature

    def signature(name, *args, **kwargs):  # type: ignore[no-untyped-def]
        sig = real(name, *args, **kwargs)
        if name == earnings_pay_for_record_task.name:
            sig.delay = broker_down  # type: ignore[method-assign]
        return sig

    monkeypatch.setattr(earnings_module.celery_app, "signature", signature)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        usage = earnings_record(querier=alice, query="tidal power in Orkney", contributor_ids=[bob.pk], source="chat")
    assert usage is not None and len(callbacks) == 1  # ran, and raised nothing
    usage.refresh_from_db()
    assert usage.paid_at is None and not earnings(bob).exists()
    assert "could not queue its payment" in caplog.text and "tidal" not in caplog.text

    earnings_sweep_task()
    usage.refresh_from_db()
    assert usage.paid_at is not None and earnings(bob).count() == 1


def test_earnings_record_without_other_contributors_records_nothing(alice):
    assert earnings_record(querier=alice, query="q", contributor_ids=[alice.pk], source="search") is None
    assert not WorldUsage.objects.exists()


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"query": "q", "query_digest": "0" * 64},
        {"query_digest": "not-a-digest"},
        {"query": "q", "source": "telepathy"},
    ],
)
def test_earnings_record_refuses_bad_arguments(alice, bob, kwargs):
    with pytest.raises(ValidationError):
        earnings_record(querier=alice, contributor_ids=[bob.pk], **{"source": "search", **kwargs})
    assert not WorldUsage.objects.exists()


def test_billing_imports_no_feature_app() -> None:
    import ast
    from pathlib import Path

    import billing

    root = Path(billing.__file__).parent
    offenders = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            names += [a.name for a in node.names] if isinstance(node, ast.Import) else []
            for name in names:
                if name.split(".")[:2] in (["exograph", "graphs"], ["exograph", "documents"], ["exograph", "chat"]):
                    offenders.append(f"{path.relative_to(root)}: {name}")
    assert offenders == []


def test_the_payment_task_the_services_send_by_name_is_registered_when_django_starts():
    """The services send it by name (they never import billing.tasks): the app registry must hold it in any process
    that starts Django, or an eager or unknown send goes nowhere and no contributor is paid until the sweep."""
    import subprocess
    import sys

    code = (
        "import django; django.setup(); "
        "from exograph.celery import app; from billing.services.earnings import PAY_TASK; "
        "import sys; print(PAY_TASK in app.tasks); sys.modules.get('billing.tasks') or print('tasks not imported')"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True, env=_django_env()
    )
    assert done.stdout.split() == ["True"]


def _django_env() -> dict[str, str]:
    import os

    return {**os.environ, "DJANGO_SETTINGS_MODULE": "exograph.settings"}
