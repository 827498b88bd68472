"""The ledger: charges, refunds, grants, quotes; exact under concurrency."""

from __future__ import annotations

import io
import threading

import pytest
from django.core.management import call_command
from django.db import IntegrityError, connection

from billing.models import AppendOnlyError, CreditEntry, EntryKind
from billing.services import (
    credit_balance,
    credits_charge,
    credits_grant_admin,
    credits_grant_signup,
    credits_quote,
    credits_refund,
)
from exograph.accounts.models import User
from exograph.accounts.services import user_create
from exograph.core.errors import Conflict, InsufficientCredits, NotFound, PermissionDenied, ValidationError
from tests.billing.conftest import account_of, assert_ledger_whole, ledger_sum, run_concurrently
from tests.factories import UserFactory


@pytest.mark.django_db
def test_new_account_gets_signup_grant_once(settings):
    settings.BILLING_SIGNUP_CREDITS = 100
    user = user_create(email="new@example.com", password="a-long-enough-password-42", email_verified=True)
    assert credit_balance(account=user) == 100
    credits_grant_signup(account=user)  # a second call changes nothing
    assert credit_balance(account=user) == 100
    entry = CreditEntry.objects.get(account__user=user)
    assert entry.kind == EntryKind.SIGNUP_GRANT and entry.balance_after == 100
    assert_ledger_whole(user)


@pytest.mark.django_db
def test_charge_spends_price_and_records_entry(alice, fund):
    fund(alice, 20)
    result = credits_charge(account=alice, action="upload", units=4, idempotency_key="doc-1", reference="document 1")
    assert result.credits_charged == 9 and result.balance == 11
    assert result.entry is not None and result.entry.kind == EntryKind.CHARGE and result.entry.amount == -9
    assert credit_balance(account=alice) == 11
    assert_ledger_whole(alice)


@pytest.mark.parametrize(
    ("action", "units", "cost"),
    [("upload", 1, 6), ("upload", 10, 15), ("chat.snap", 1, 3), ("chat.ponder", 1, 10),
     ("research.snap", 1, 30), ("research.ponder", 1, 100), ("search", 1, 0), ("list", 1, 0)],
)  # fmt: skip
@pytest.mark.django_db
def test_price_table(alice, action, units, cost):
    assert credits_quote(account=alice, action=action, units=units).cost == cost


@pytest.mark.django_db
def test_research_is_capped_by_budget(alice, fund):
    fund(alice, 100)
    assert credits_quote(account=alice, action="research.ponder", max_cost=40).cost == 40
    result = credits_charge(account=alice, action="research.ponder", idempotency_key="r1", max_cost=40)
    assert result.credits_charged == 40 and result.balance == 60


@pytest.mark.django_db
def test_free_action_writes_nothing(alice, fund):
    fund(alice, 5)
    result = credits_charge(account=alice, action="search", idempotency_key="s1")
    assert result.credits_charged == 0 and result.entry is None and result.balance == 5
    assert CreditEntry.objects.filter(kind=EntryKind.CHARGE).count() == 0


@pytest.mark.django_db
def test_quote_changes_nothing(alice, fund):
    fund(alice, 5)
    quote = credits_quote(account=alice, action="chat.ponder")
    assert (quote.cost, quote.balance, quote.covered) == (10, 5, False)
    assert credits_quote(account=alice, action="chat.snap").covered
    assert credit_balance(account=alice) == 5 and CreditEntry.objects.count() == 1


@pytest.mark.django_db
def test_insufficient_credits_is_402_with_needed_and_balance(alice, fund):
    fund(alice, 2)
    with pytest.raises(InsufficientCredits) as caught:
        credits_charge(account=alice, action="chat.snap", idempotency_key="m1")
    assert caught.value.status == 402
    assert caught.value.extra == {"needed": 3, "balance": 2}
    assert credit_balance(account=alice) == 2 and CreditEntry.objects.filter(kind=EntryKind.CHARGE).count() == 0


@pytest.mark.django_db
@pytest.mark.parametrize("purchases", [True, False])
def test_insufficient_credits_hint_names_a_fix_this_server_offers(alice, fund, settings, purchases):
    # A newcomer's make run (no Stripe) was told to buy credits with POST /api/v1/billing/checkout/, which there
    # answers 503 purchases_disabled: the hint sends them to what works on this server.
    settings.USE_STRIPE = purchases
    fund(alice, 1)
    with pytest.raises(InsufficientCredits) as caught:
        credits_charge(account=alice, action="chat.snap", idempotency_key="m1")
    hint = caught.value.hint
    if purchases:
        assert "Buy credits" in hint and "/api/v1/billing/checkout/" in hint
    else:
        assert "checkout" not in hint and "Buy" not in hint
        assert "Purchases are disabled on this server" in hint and "administrator" in hint


@pytest.mark.django_db
def test_account_without_credits_row_gets_402_not_500(alice):
    with pytest.raises(InsufficientCredits):
        credits_charge(account=alice, action="chat.snap", idempotency_key="m1")
    assert account_of(alice).balance == 0


@pytest.mark.django_db
def test_same_key_charges_once_and_returns_first_result(alice, fund):
    fund(alice, 10)
    first = credits_charge(account=alice, action="chat.snap", idempotency_key="k")
    again = credits_charge(account=alice, action="chat.snap", idempotency_key="k")
    assert again == first and credit_balance(account=alice) == 7


@pytest.mark.django_db
def test_same_key_for_a_different_charge_is_conflict(alice, fund):
    fund(alice, 20)
    credits_charge(account=alice, action="chat.snap", idempotency_key="k")
    with pytest.raises(Conflict):
        credits_charge(account=alice, action="chat.ponder", idempotency_key="k")
    assert credit_balance(account=alice) == 17


@pytest.mark.django_db
def test_keys_are_per_account(alice, bob, fund):
    fund(alice, 10)
    fund(bob, 10)
    credits_charge(account=alice, action="chat.snap", idempotency_key="same")
    credits_charge(account=bob, action="chat.snap", idempotency_key="same")
    assert credit_balance(account=alice) == 7 and credit_balance(account=bob) == 7


@pytest.mark.parametrize("units", [-1, 1.5, "3", True])
@pytest.mark.django_db
def test_bad_units_are_rejected(alice, fund, units):
    fund(alice, 10)
    with pytest.raises(ValidationError):
        credits_charge(account=alice, action="upload", units=units, idempotency_key="x")
    assert credit_balance(account=alice) == 10


@pytest.mark.parametrize("key", ["", "   ", "x" * 201, "bad\nkey"])
@pytest.mark.django_db
def test_bad_idempotency_keys_are_rejected(alice, fund, key):
    fund(alice, 10)
    with pytest.raises(ValidationError):
        credits_charge(account=alice, action="chat.snap", idempotency_key=key)


@pytest.mark.django_db
def test_unknown_action_is_rejected(alice):
    with pytest.raises(ValidationError) as caught:
        credits_charge(account=alice, action="teleport", idempotency_key="x")
    assert "upload" in caught.value.hint


@pytest.mark.django_db
def test_refund_gives_back_once(alice, fund):
    fund(alice, 10)
    credits_charge(account=alice, action="upload", units=2, idempotency_key="doc")
    first = credits_refund(account=alice, charge_key="doc", reason="parse failed")
    second = credits_refund(account=alice, charge_key="doc", reason="parse failed")
    assert first.pk == second.pk and first.amount == 7 and first.kind == EntryKind.REFUND
    assert credit_balance(account=alice) == 10
    assert_ledger_whole(alice)


@pytest.mark.django_db
def test_refund_of_unknown_or_foreign_charge_is_404(alice, bob, fund):
    fund(alice, 10)
    credits_charge(account=alice, action="chat.snap", idempotency_key="mine")
    with pytest.raises(NotFound):
        credits_refund(account=bob, charge_key="mine", reason="steal")
    with pytest.raises(NotFound):
        credits_refund(account=alice, charge_key="nope", reason="x")
    assert credit_balance(account=bob) == 0 and credit_balance(account=alice) == 7


@pytest.mark.django_db
def test_admin_grant_and_removal(alice):
    admin = UserFactory(email="admin@example.com", is_staff=True)
    credits_grant_admin(account=alice, amount=50, actor=admin, note="goodwill")
    entry = credits_grant_admin(account=alice, amount=-20, actor=admin, note="correction")
    assert entry.kind == EntryKind.ADMIN_ADJUST and entry.counterparty == admin and "correction" in entry.reference
    assert credit_balance(account=alice) == 30
    with pytest.raises(ValidationError):
        credits_grant_admin(account=alice, amount=-31, actor=admin, note="too much")
    with pytest.raises(ValidationError):
        credits_grant_admin(account=alice, amount=0, actor=admin, note="zero")
    with pytest.raises(PermissionDenied):
        credits_grant_admin(account=alice, amount=5, actor=alice, note="self-service")
    assert credit_balance(account=alice) == 30
    assert_ledger_whole(alice)


@pytest.mark.django_db
def test_ledger_entries_are_append_only(alice, fund):
    fund(alice, 5)
    entry = CreditEntry.objects.get(account__user=alice)
    entry.amount = 1000
    with pytest.raises(AppendOnlyError):
        entry.save()
    with pytest.raises(AppendOnlyError):
        entry.delete()


def test_billing_rules_are_raised_not_asserted():
    """`assert` vanishes under python -O; billing's invariants must hold there too."""
    import ast
    from pathlib import Path

    import billing

    root = Path(billing.__file__).parent
    found = [
        f"{path.relative_to(root)}:{node.lineno}"
        for path in sorted(root.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Assert)
    ]
    assert found == []


@pytest.mark.django_db
def test_database_refuses_a_negative_balance(alice, fund):
    fund(alice, 5)
    account = account_of(alice)
    account.balance = -1
    with pytest.raises(IntegrityError):
        account.save(update_fields=["balance"])


@pytest.mark.django_db
@pytest.mark.parametrize("credits", [0, 10, 99])
def test_create_account_credits_below_the_signup_grant_sets_that_balance(settings, credits):
    settings.BILLING_SIGNUP_CREDITS = 100
    out = io.StringIO()
    call_command("create_account", "--email", "low@example.com", "--credits", str(credits), stdout=out)
    user = User.objects.get(email="low@example.com")
    assert credit_balance(account=user) == credits and f"balance: {credits} credits" in out.getvalue()
    call_command("create_account", "--email", "low@example.com", "--credits", str(credits), stdout=out)
    kinds = list(CreditEntry.objects.filter(account__user=user).order_by("id").values_list("kind", "amount"))
    assert kinds == [(EntryKind.SIGNUP_GRANT, 100), (EntryKind.ADMIN_ADJUST, credits - 100)]
    assert_ledger_whole(user)


@pytest.mark.django_db
def test_create_account_credits_never_removes_an_existing_accounts_credits(settings):
    settings.BILLING_SIGNUP_CREDITS = 100
    user = user_create(email="buyer@example.com", password="a-long-enough-password-42")
    credits_grant_admin(account=user, amount=400, actor=None, note="bought")
    call_command("create_account", "--email", "buyer@example.com", "--credits", "50", stdout=io.StringIO())
    assert credit_balance(account=user) == 500


@pytest.mark.django_db
def test_create_account_credits_tops_up_to_n(settings):
    settings.BILLING_SIGNUP_CREDITS = 100
    out = io.StringIO()
    call_command("create_account", "--email", "demo@example.com", "--credits", "1000", stdout=out)
    user = User.objects.get(email="demo@example.com")
    assert credit_balance(account=user) == 1000
    call_command("create_account", "--email", "demo@example.com", "--credits", "1000", stdout=out)
    assert credit_balance(account=user) == 1000  # re-running never adds twice
    kinds = list(CreditEntry.objects.filter(account__user=user).order_by("id").values_list("kind", "amount"))
    assert kinds == [(EntryKind.SIGNUP_GRANT, 100), (EntryKind.ADMIN_ADJUST, 900)]


# --- concurrency (real overlap on PostgreSQL and SQLite; see run_concurrently) -----------


@pytest.mark.django_db(transaction=True)
def test_concurrent_runner_overlaps_calls_on_their_own_connections():
    """Every call is inside fn at the same time, each on its own open connection (no turn-taking)."""
    n = 8
    inside = threading.Barrier(n)

    def call(i: int) -> int:
        assert User.objects.filter(pk=-i).count() == 0  # opens this thread's own connection
        inside.wait(timeout=10)  # passes only if all n calls are in flight at once
        return id(connection.connection)

    results = run_concurrently(call, n, workers=n)
    assert [status for status, _ in results] == ["ok"] * n, results
    assert len({conn for _, conn in results}) == n


@pytest.mark.django_db(transaction=True)
def test_200_concurrent_charges_of_3_against_100(fund):
    user = UserFactory()
    fund(user, 100)
    results = run_concurrently(
        lambda i: credits_charge(account=user, action="chat.snap", idempotency_key=f"c{i}"), 200, workers=30
    )
    ok = [r for status, r in results if status == "ok"]
    errors = [r for status, r in results if status == "err"]
    assert len(ok) == 33
    assert len(errors) == 167 and all(isinstance(e, InsufficientCredits) and e.status == 402 for e in errors)
    assert credit_balance(account=user) == 1
    assert ledger_sum(user) == 1
    assert CreditEntry.objects.filter(account__user=user, kind=EntryKind.CHARGE).count() == 33
    assert sorted(r.balance for r in ok) == list(range(1, 100, 3))
    assert_ledger_whole(user)


@pytest.mark.django_db(transaction=True)
def test_same_key_20_times_concurrently_charges_once(fund):
    user = UserFactory()
    fund(user, 100)
    results = run_concurrently(
        lambda i: credits_charge(account=user, action="chat.ponder", idempotency_key="one-message"), 20, workers=20
    )
    assert all(status == "ok" for status, _ in results), results
    answers = {(r.entry.pk, r.credits_charged, r.balance) for _, r in results}
    assert len(answers) == 1 and answers.pop()[1:] == (10, 90)
    assert credit_balance(account=user) == 90
    assert CreditEntry.objects.filter(account__user=user, kind=EntryKind.CHARGE).count() == 1
    assert_ledger_whole(user)


@pytest.mark.django_db(transaction=True)
def test_same_key_concurrently_when_only_one_charge_fits(fund):
    user = UserFactory()
    fund(user, 3)
    results = run_concurrently(
        lambda i: credits_charge(account=user, action="chat.snap", idempotency_key="last"), 10, workers=10
    )
    assert all(status == "ok" for status, _ in results), results
    assert {r.balance for _, r in results} == {0}
    assert_ledger_whole(user)


@pytest.mark.django_db(transaction=True)
def test_charge_with_async_commit_is_still_exact(settings, fund):
    settings.BILLING_CHARGE_SYNC_COMMIT = False
    user = UserFactory()
    fund(user, 10)
    assert credits_charge(account=user, action="chat.snap", idempotency_key="a").balance == 7
    assert credits_charge(account=user, action="chat.snap", idempotency_key="a").balance == 7
    assert_ledger_whole(user)


@pytest.mark.pg_only
@pytest.mark.django_db(transaction=True)
def test_an_async_commit_charge_is_one_statement(settings, fund):
    """The opt-in's charge sets synchronous_commit inside its own statement: no SET LOCAL and savepoint of its own."""
    from django.test.utils import CaptureQueriesContext

    settings.BILLING_CHARGE_SYNC_COMMIT = False
    user = UserFactory()
    fund(user, 10)
    with CaptureQueriesContext(connection) as queries:
        assert credits_charge(account=user, action="chat.snap", idempotency_key="one-trip").balance == 7
    assert len(queries.captured_queries) == 1, [q["sql"][:60] for q in queries.captured_queries]
    assert "set_config('synchronous_commit', 'off', true)" in queries.captured_queries[0]["sql"]
    assert_ledger_whole(user)


@pytest.mark.pg_only
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("prepared", [True, False])
def test_the_ledger_statement_is_prepared_on_its_connection(fund, prepared):
    """PostgreSQL plans the charge statement once per connection, not on every charge; off (the connection's
    prepare_threshold None: EXOGRAPH_DB_PREPARED_STATEMENTS=0) behind a pooler that cannot keep prepared statements."""
    connection.ensure_connection()
    assert connection.connection.prepare_threshold is not None  # the settings' default
    query = (
        "SELECT coalesce(sum(generic_plans + custom_plans), 0) FROM pg_prepared_statements "
        "WHERE statement LIKE '%%INSERT INTO billing_creditentry%%'"
    )

    def executions() -> int:
        with connection.cursor() as cursor:
            cursor.execute(query)
            return int(cursor.fetchone()[0])

    user = UserFactory()
    fund(user, 30)
    before, threshold = executions(), connection.connection.prepare_threshold
    if not prepared:
        connection.connection.prepare_threshold = None
    try:
        for n in range(3):
            credits_charge(account=user, action="chat.snap", idempotency_key=f"prepared-{n}")
    finally:
        connection.connection.prepare_threshold = threshold
    assert executions() - before == (3 if prepared else 0)
    assert credit_balance(account=user) == 30 - 9
    assert_ledger_whole(user)


@pytest.mark.django_db(transaction=True)
def test_charge_rolls_back_with_the_callers_transaction(fund):
    from django.db import transaction

    user = UserFactory()
    fund(user, 10)
    with pytest.raises(RuntimeError), transaction.atomic():
        credits_charge(account=user, action="chat.snap", idempotency_key="doc")
        raise RuntimeError("document creation failed")
    assert credit_balance(account=user) == 10
    with transaction.atomic():  # a repeat inside a transaction leaves the transaction usable
        first = credits_charge(account=user, action="chat.snap", idempotency_key="doc")
        again = credits_charge(account=user, action="chat.snap", idempotency_key="doc")
        assert first == again
        assert User.objects.filter(pk=user.pk).exists()
    assert credit_balance(account=user) == 7
    assert_ledger_whole(user)
