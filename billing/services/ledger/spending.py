"""Spending credits: quotes (dry runs) and charges take one decision (spend_check); refunds of charges."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction

from billing.models import CreditEntry, EntryKind
from billing.prices import price_for
from billing.services.caps import KeyCapReached, key_cap_check, month_start, spending_key_current
from billing.services.ledger.posting import (
    _applied,
    _check_key,
    _existing,
    _post,
    credit_balance,
    ledger_key,
)
from exograph.accounts.models import User
from exograph.core.errors import (
    Conflict,
    ExoGraphError,
    InsufficientCredits,
    NotFound,
)


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


# Without Stripe (make run, a self-hosted server) checkout answers 503 purchases_disabled: credits come from an admin.
NO_PURCHASES_HINT = (
    "Purchases are disabled on this server (Stripe is not configured): ask an administrator to grant credits."
)


def top_up_hint() -> str:
    """How to get more credits on this server: buy them when purchases are on, else ask an administrator."""
    return InsufficientCredits.hint if settings.USE_STRIPE else NO_PURCHASES_HINT


def _insufficient(*, needed: int, account: User) -> InsufficientCredits:
    balance = credit_balance(account=account)
    return InsufficientCredits(
        f"This needs {needed} credits; the balance is {balance}.",
        hint=top_up_hint(),
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
