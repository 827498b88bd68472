"""Adding and removing credits other than by spending: grants (signup, purchases, earnings), clamped removals
(refunds and disputes of purchases) and staff adjustments."""

from __future__ import annotations

import logging
import uuid

from django.conf import settings
from django.db import IntegrityError, transaction

from billing.models import CreditAccount, CreditEntry, EntryKind
from billing.services.ledger.posting import (
    _applied,
    _check_amount,
    _check_key,
    _existing,
    _post,
    credit_account_for,
    credit_balance,
)
from exograph.accounts.models import User
from exograph.core.addresses import email_digest
from exograph.core.errors import (
    PermissionDenied,
    ValidationError,
)

logger = logging.getLogger(__name__)


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
