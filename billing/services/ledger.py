"""The ledger: the only code that changes a balance.

Every change is `_post`: one conditional UPDATE of the account row
(`... SET balance = balance + n WHERE balance + n >= 0 RETURNING balance`) together with the
`CreditEntry` insert. On PostgreSQL both are one statement (a data-modifying CTE), atomic by
itself or inside the caller's transaction (as a savepoint); on SQLite they are two statements
in one transaction. The UPDATE takes the row lock, so concurrent changes of one account queue
on the row and each re-checks the condition against the committed balance: two charges can
never both spend the last credits. The entry's unique idempotency key makes each change happen
once; a duplicate insert fails and takes its UPDATE back with it.

Idempotency keys are namespaced per account and kind (``charge:<user id>:<caller's key>``),
so two accounts may use the same key.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from billing.models import CreditAccount, CreditEntry, EntryKind, Hold
from billing.prices import price_for
from billing.services.caps import KeyCapReached, key_cap_check, month_start, spending_key_current
from exograph.accounts.models import User
from exograph.core.addresses import email_digest
from exograph.core.errors import (
    Conflict,
    ExoGraphError,
    InsufficientCredits,
    NotFound,
    PermissionDenied,
    ValidationError,
)

logger = logging.getLogger(__name__)

MAX_KEY_LENGTH = 200


@dataclass(frozen=True)
class ChargeResult:
    entry: CreditEntry | None  # None for free actions
    credits_charged: int
    balance: int


@dataclass(frozen=True)
class Quote:
    cost: int
    balance: int
    covered: bool
    refusal: ExoGraphError | None = None  # what the real call would answer when not covered (402, 403)


@dataclass(frozen=True)
class Spent:
    """What a metered use case spent for one request, as its answer reports it: `credits_charged` (charged, plus
    what a hold reserved), `credits_held` (of those, the reservation captured as the work proceeds) and the
    balance after."""

    credits_charged: int
    balance: int
    credits_held: int = 0

    def fields(self) -> dict[str, int]:
        """The answer's money fields: credits_charged, credits_held (holds only) and balance."""
        out = {"credits_charged": self.credits_charged}
        if self.credits_held:
            out["credits_held"] = self.credits_held
        out["balance"] = self.balance
        return out


def _check_key(idempotency_key: str) -> str:
    if not isinstance(idempotency_key, str) or not idempotency_key.strip():
        raise ValidationError(
            "An idempotency key is required.",
            code="invalid_idempotency_key",
            hint="Send a unique string per operation, e.g. a UUID.",
        )
    key = idempotency_key.strip()
    if len(key) > MAX_KEY_LENGTH or not key.isprintable():
        raise ValidationError(
            f"The idempotency key must be at most {MAX_KEY_LENGTH} printable characters.",
            code="invalid_idempotency_key",
            hint="Use a UUID.",
        )
    return key


def _check_amount(amount: object, *, what: str = "amount") -> int:
    if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
        raise ValidationError(
            f"The {what} must be a whole number of credits greater than 0; got {amount!r}.",
            code="invalid_amount",
            hint="Send a positive whole number.",
        )
    return amount


def ledger_key(kind: str, user_id: int, key: str) -> str:
    return f"{kind}:{user_id}:{key}"


def credit_account_for(*, user: User) -> CreditAccount:
    """The account's credit balance row, created empty on first use."""
    account = CreditAccount.objects.filter(user_id=user.pk).first()
    if account is not None:
        return account
    account, _ = CreditAccount.objects.get_or_create(user_id=user.pk, defaults={"plan": settings.BILLING_DEFAULT_PLAN})
    return account


_UPDATE_SQL = (
    "UPDATE billing_creditaccount SET balance = balance + %s, held = held + %s, modified = %s "
    "WHERE user_id = %s AND balance + %s >= 0 AND held + %s >= 0 RETURNING id, balance"
)


def _async_commit() -> None:
    """Opt-in (BILLING_CHARGE_SYNC_COMMIT=0): don't wait for the WAL flush when committing a charge.

    PostgreSQL keeps the ledger consistent either way (the WAL is ordered; a crash can only
    drop the last charges committed in the final fraction of a second, never half of one and
    never a purchase or refund, which always commit synchronously). Dropped charges favour the
    customer; the default stays fully durable.
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit TO OFF")


# PostgreSQL: the conditional UPDATE and the entry INSERT are one statement (a data-modifying
# CTE), so they commit or fail together even without a transaction block, in one round trip.
_PG_POST_SQL = """
WITH acct AS (
    UPDATE billing_creditaccount
    SET balance = balance + %(amount)s, held = held + %(held)s, modified = %(now)s
    WHERE user_id = %(user)s AND balance + %(amount)s >= 0 AND held + %(held)s >= 0
    RETURNING id, balance
)
INSERT INTO billing_creditentry
    (account_id, kind, amount, balance_after, held_change, reference, idempotency_key, hold_id, counterparty_id,
     api_key_id, created)
SELECT id, %(kind)s, %(amount)s, balance, %(held)s, %(reference)s, %(key)s, %(hold)s, %(counterparty)s,
    %(api_key)s, %(now)s
FROM acct
RETURNING id, account_id, balance_after
"""


def _post_postgresql(params: dict[str, Any], *, async_commit: bool) -> tuple[int, int, int] | None:
    def execute() -> tuple[int, int, int] | None:
        with connection.cursor() as cursor:
            cursor.execute(_PG_POST_SQL, params)
            return cursor.fetchone()  # type: ignore[no-any-return]

    if not connection.in_atomic_block and not async_commit:
        return execute()  # one autocommitted statement: atomic by itself
    with transaction.atomic():  # a savepoint inside the caller's transaction
        if async_commit:
            _async_commit()
        return execute()


def _post(
    *,
    user: User,
    amount: int,
    kind: str,
    key: str,
    reference: str = "",
    held_change: int = 0,
    hold: Hold | None = None,
    counterparty: User | None = None,
    api_key_id: int | None = None,
) -> CreditEntry | None:
    """Change the balance and write its entry atomically. None if the balance (or held) would go negative.

    api_key_id: the API key the spend is counted against (billing.services.caps).

    Raises IntegrityError (after rolling this change back) if the key was already used.
    """
    now = timezone.now()
    reference = reference[:500]
    fields = {
        "kind": kind,
        "amount": amount,
        "held_change": held_change,
        "reference": reference,
        "idempotency_key": key,
        "hold": hold,
        "counterparty": counterparty,
        "api_key_id": api_key_id,
    }
    if connection.vendor == "postgresql":
        async_commit = not connection.in_atomic_block and kind == EntryKind.CHARGE
        async_commit = async_commit and not settings.BILLING_CHARGE_SYNC_COMMIT
        params: dict[str, Any] = {
            "amount": amount, "held": held_change, "now": now, "user": user.pk, "kind": kind,
            "reference": reference, "key": key, "hold": hold.pk if hold else None,
            "counterparty": counterparty.pk if counterparty else None, "api_key": api_key_id,
        }  # fmt: skip
        for _ in range(2):
            row = _post_postgresql(params, async_commit=async_commit)
            if row is not None:
                entry = CreditEntry(id=row[0], account_id=row[1], balance_after=row[2], created=now, **fields)
                entry._state.adding = False
                entry._state.db = connection.alias
                return entry
            if CreditAccount.objects.filter(user_id=user.pk).exists():
                return None
            credit_account_for(user=user)
        return None  # pragma: no cover - the account exists after the first pass
    with transaction.atomic():
        for _ in range(2):
            with connection.cursor() as cursor:
                cursor.execute(_UPDATE_SQL, [amount, held_change, now, user.pk, amount, held_change])
                found = cursor.fetchone()
            if found is not None:
                return CreditEntry.objects.create(account_id=found[0], balance_after=found[1], **fields)
            if CreditAccount.objects.filter(user_id=user.pk).exists():
                return None
            credit_account_for(user=user)
        return None  # pragma: no cover


class LedgerInvariantError(RuntimeError):
    """A change the ledger's own rules guarantee did not apply: a bug or a hand-edited row, never user error."""


def _applied(entry: CreditEntry | None, *, what: str, user: User) -> CreditEntry:
    """The entry of a change that must apply. Raises LedgerInvariantError (not `assert`: python -O strips it)."""
    if entry is None:
        logger.error("ledger invariant broken: %s did not apply on account of user %s", what, user.pk)
        raise LedgerInvariantError(f"The ledger refused a {what} that its rules guarantee; nothing was changed.")
    return entry


def _existing(key: str) -> CreditEntry | None:
    return CreditEntry.objects.filter(idempotency_key=key).first()


def credit_balance(*, account: User) -> int:
    """The spendable credits of an account (0 before its first entry)."""
    value = CreditAccount.objects.filter(user_id=account.pk).values_list("balance", flat=True).first()
    return int(value or 0)


def spend_check(*, account: User, cost: int, lock: bool) -> None:
    """The one decision whether this request may spend `cost` now, for a quote and a spend alike: the current
    API key's monthly cap (KeyCapReached, 403), then the balance (InsufficientCredits, 402).

    A charge or hold asks it with lock=True inside the transaction that writes the spend (the key's row lock is
    held until it commits; the conditional UPDATE of _post re-checks the balance against concurrent spends);
    a quote (dry_run) asks it with lock=False and changes nothing.
    """
    spender = spending_key_current()
    if spender is not None and spender.capped:
        key_cap_check(key_id=spender.id, cost=cost, lock=lock)
    if cost > 0 and credit_balance(account=account) < cost:
        raise _insufficient(needed=cost, account=account)


def credits_quote(*, account: User, action: str, units: int = 1, max_cost: int | None = None) -> Quote:
    """What an action would cost and whether this request may spend it (the balance and the API key's monthly
    cap, decided by spend_check as the charge decides it); `refusal` is the error the real call would answer.
    Changes nothing."""
    return credits_quote_amount(account=account, cost=price_for(action, units, max_cost=max_cost))


def credits_quote_amount(*, account: User, cost: int) -> Quote:
    """credits_quote for a spend whose amount the caller decided (a research session holds its budget): whether
    this request may spend `cost` now, by spend_check. Changes nothing."""
    refusal: ExoGraphError | None = None
    if cost > 0:
        try:
            spend_check(account=account, cost=cost, lock=False)
        except (KeyCapReached, InsufficientCredits) as exc:
            refusal = exc
    return Quote(cost=cost, balance=credit_balance(account=account), covered=refusal is None, refusal=refusal)


def quote_out(quote: Quote) -> dict[str, Any]:
    """The dry-run answer's fields: {dry_run, credits_needed, balance, covered} and, when not covered, `refusal`,
    the real call's error envelope ({code, message, hint, ...}) word for word."""
    body: dict[str, Any] = {
        "dry_run": True,
        "credits_needed": quote.cost,
        "balance": quote.balance,
        "covered": quote.covered,
    }
    if quote.refusal is not None:
        refusal = quote.refusal
        body["refusal"] = {"code": refusal.code, "message": refusal.message, "hint": refusal.hint, **refusal.extra}
    return body


def _insufficient(*, needed: int, account: User) -> InsufficientCredits:
    balance = credit_balance(account=account)
    return InsufficientCredits(
        f"This needs {needed} credits; the balance is {balance}.",
        extra={"needed": needed, "balance": balance},
    )


def _charge_replay(entry: CreditEntry, *, cost: int, account: User) -> ChargeResult:
    if entry.kind != EntryKind.CHARGE or entry.account.user_id != account.pk:
        raise Conflict("This idempotency key was used for something else.", hint="Use a new key per operation.")
    if -entry.amount != cost:
        raise Conflict(
            f"This idempotency key was first used for a charge of {-entry.amount} credits, not {cost}.",
            code="idempotency_key_reused",
            hint="Use a new key per operation.",
        )
    return ChargeResult(entry=entry, credits_charged=-entry.amount, balance=entry.balance_after)


def credits_charge(
    *,
    account: User,
    action: str,
    units: int = 1,
    idempotency_key: str,
    reference: str = "",
    max_cost: int | None = None,
) -> ChargeResult:
    """Spend credits for a metered action, once per key (a repeat returns the first result).

    Writes a `charge` entry, counted against the current request's API key (billing.services.caps).
    Raises InsufficientCredits (402, with needed and balance), KeyCapReached (403: the API key's
    monthly cap), ValidationError on bad input, Conflict if the key was used for a different charge.
    """
    cost = price_for(action, units, max_cost=max_cost)
    key = ledger_key("charge", account.pk, _check_key(idempotency_key))
    if cost == 0:
        return ChargeResult(entry=None, credits_charged=0, balance=credit_balance(account=account))
    spender = spending_key_current()
    if spender is None or not spender.capped:
        return _charge_post(
            account=account,
            cost=cost,
            key=key,
            reference=reference or action,
            api_key_id=spender.id if spender else None,
        )
    with transaction.atomic():  # the key's row lock is held until the charge commits
        existing = _existing(key)
        if existing is not None:  # a retry gets its first answer, even once the cap is reached
            return _charge_replay(existing, cost=cost, account=account)
        spend_check(account=account, cost=cost, lock=True)
        return _charge_post(account=account, cost=cost, key=key, reference=reference or action, api_key_id=spender.id)


def _charge_post(*, account: User, cost: int, key: str, reference: str, api_key_id: int | None) -> ChargeResult:
    # No look-up first: the unique key decides. A repeat's insert fails and rolls back its UPDATE.
    try:
        entry = _post(
            user=account, amount=-cost, kind=EntryKind.CHARGE, key=key, reference=reference, api_key_id=api_key_id
        )
    except IntegrityError:
        # This key was charged before (or concurrently, committed first); ours was rolled back.
        existing = _existing(key)
        if existing is None:
            raise
        return _charge_replay(existing, cost=cost, account=account)
    if entry is None:
        # Our UPDATE waited for a concurrent same-key charge that then spent the balance.
        existing = _existing(key)
        if existing is not None:
            return _charge_replay(existing, cost=cost, account=account)
        raise _insufficient(needed=cost, account=account)
    return ChargeResult(entry=entry, credits_charged=cost, balance=entry.balance_after)


def credits_refund(*, account: User, charge_key: str, reason: str) -> CreditEntry:
    """Give back the whole of an earlier charge (once; a repeat returns the same refund entry).

    Raises NotFound if the account has no charge with that key.
    """
    charge = _existing(ledger_key("charge", account.pk, _check_key(charge_key)))
    if charge is None or charge.kind != EntryKind.CHARGE:
        raise NotFound("No charge with this key on this account.", hint="Pass the idempotency key of the charge.")
    key = f"refund:{charge.pk}"
    existing = _existing(key)
    if existing is not None:
        return existing
    try:
        entry = _post(
            user=account,
            amount=-charge.amount,
            kind=EntryKind.REFUND,
            key=key,
            reference=f"refund of {charge.reference}: {reason}",
            api_key_id=charge.api_key_id if charge.created >= month_start() else None,
        )
    except IntegrityError:
        existing = _existing(key)
        if existing is None:
            raise
        return existing
    return _applied(entry, what="refund", user=account)  # a positive change always applies


def credits_grant(
    *, account: User, amount: int, kind: str, key: str, reference: str, counterparty: User | None = None
) -> tuple[CreditEntry, bool]:
    """Add credits once per key. Returns (entry, created)."""
    _check_amount(amount)
    existing = _existing(key)
    if existing is not None:
        return existing, False
    try:
        entry = _post(user=account, amount=amount, kind=kind, key=key, reference=reference, counterparty=counterparty)
    except IntegrityError:
        existing = _existing(key)
        if existing is None:
            raise
        return existing, False
    return _applied(entry, what="grant", user=account), True


def credits_remove_clamped(*, account: User, amount: int, kind: str, key: str, reference: str) -> tuple[int, int]:
    """Take back up to `amount` credits, never below zero. Returns (removed, shortfall); once per key.

    Used for Stripe refunds and disputes: spent credits cannot be unspent, so the part the
    balance cannot cover is recorded as a shortfall instead of a negative balance.
    """
    _check_amount(amount)
    with transaction.atomic():
        existing = _existing(key)
        if existing is not None:
            return -existing.amount, amount + existing.amount
        credit_account = CreditAccount.objects.select_for_update().get(pk=credit_account_for(user=account).pk)
        removed = min(amount, int(credit_account.balance))
        shortfall = amount - removed
        note = f"{reference} (shortfall {shortfall}: already spent)" if shortfall else reference
        entry = _post(user=account, amount=-removed, kind=kind, key=key, reference=note)
        _applied(entry, what="clamped removal", user=account)  # the row is locked and removed <= balance
        return removed, shortfall


def signup_grant_key(*, email: str) -> str:
    """The signup grant's idempotency key: a digest of the canonical address (exograph.core.addresses), so it
    outlives the account (the ledger stays when an account is deleted) without keeping the address."""
    return f"signup:{email_digest(email)}"


def credits_grant_signup(*, account: User) -> CreditEntry | None:
    """The signup grant (settings.BILLING_SIGNUP_CREDITS), once per email address: an account whose address (however
    written) had it before, under a deleted account, gets nothing. Returns the grant entry (possibly an earlier
    account's), None if the grant is 0."""
    credit_account_for(user=account)  # the balance row exists whether or not the grant is this account's
    amount = settings.BILLING_SIGNUP_CREDITS
    if amount <= 0:
        return None
    legacy = _existing(f"signup:{account.pk}")  # grants made before issue 22 were keyed by account id
    if legacy is not None:
        return legacy
    entry, _ = credits_grant(
        account=account,
        amount=amount,
        kind=EntryKind.SIGNUP_GRANT,
        key=signup_grant_key(email=account.email),
        reference="welcome credits",
    )
    return entry


def _check_admin(actor: User | None) -> None:
    if actor is not None and not actor.is_staff:
        raise PermissionDenied("Only staff may adjust credits.", hint="Ask an administrator.")


@transaction.atomic
def credits_grant_admin(
    *, account: User, amount: int, actor: User | None, note: str, idempotency_key: str | None = None
) -> CreditEntry:
    """An admin adjustment (an `admin_adjust` entry): positive adds, negative removes (never below zero).

    actor None = the operator's command line. Raises ValidationError (zero, or more than the
    balance removed) and PermissionDenied (actor not staff).
    """
    _check_admin(actor)
    if isinstance(amount, bool) or not isinstance(amount, int) or amount == 0:
        raise ValidationError(
            f"An adjustment must be a non-zero whole number of credits; got {amount!r}.",
            code="invalid_amount",
            hint="Positive adds credits, negative removes them.",
        )
    if not note or not note.strip():
        raise ValidationError("Say why in a note.", code="note_required", hint="The note is kept in the ledger.")
    key = f"admin:{account.pk}:{_check_key(idempotency_key) if idempotency_key else uuid.uuid4().hex}"
    existing = _existing(key)
    if existing is not None:
        return existing
    who = actor.email if actor is not None else "operator"
    entry = _post(
        user=account,
        amount=amount,
        kind=EntryKind.ADMIN_ADJUST,
        key=key,
        reference=f"{who}: {note.strip()}",
        counterparty=actor,
    )
    if entry is None:
        balance = credit_balance(account=account)
        raise ValidationError(
            f"Cannot remove {-amount} credits; the balance is {balance}.",
            code="invalid_amount",
            hint=f"Remove at most {balance}.",
        )
    logger.info("admin adjustment %s of %s on account %s by %s", entry.pk, amount, account.pk, who)
    return entry


@transaction.atomic
def credits_top_up_admin(*, account: User, target: int, actor: User | None, note: str) -> CreditEntry | None:
    """Raise the balance to at least `target` with one admin adjustment. None if it is already there."""
    if isinstance(target, bool) or not isinstance(target, int) or target < 0:
        raise ValidationError("The target must be a whole number ≥ 0.", code="invalid_amount", hint="e.g. 1000")
    locked = CreditAccount.objects.select_for_update().get(pk=credit_account_for(user=account).pk)
    if locked.balance >= target:
        return None
    return credits_grant_admin(account=account, amount=target - int(locked.balance), actor=actor, note=note)


@transaction.atomic
def credits_set_admin(*, account: User, target: int, actor: User | None, note: str) -> CreditEntry | None:
    """Set the spendable balance to exactly `target` with one admin adjustment (up or down). None if it is there.

    Raises ValidationError (target not a whole number ≥ 0) and PermissionDenied (actor not staff).
    """
    if isinstance(target, bool) or not isinstance(target, int) or target < 0:
        raise ValidationError("The target must be a whole number ≥ 0.", code="invalid_amount", hint="e.g. 1000")
    # The row lock makes read-then-adjust one step: a concurrent charge waits, then sees the new balance.
    locked = CreditAccount.objects.select_for_update().get(pk=credit_account_for(user=account).pk)
    if locked.balance == target:
        return None
    return credits_grant_admin(account=account, amount=target - int(locked.balance), actor=actor, note=note)


def idempotency_records_purge() -> int:
    """Forget stored Idempotency-Key answers older than BILLING_IDEMPOTENCY_RETENTION_SECONDS. Returns how many."""
    from datetime import timedelta

    from billing.models import IdempotentRequest

    cutoff = timezone.now() - timedelta(seconds=settings.BILLING_IDEMPOTENCY_RETENTION_SECONDS)
    deleted, _ = IdempotentRequest.objects.filter(modified__lt=cutoff).delete()
    return int(deleted)
