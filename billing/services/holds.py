"""Holds: reserve credits for long work, spend them in parts, give back the rest.

A hold moves credits from `balance` to `held` (entry: amount -n, held_change +n); a capture
spends part of it (amount 0, held_change -p); the release returns what is left (amount +r,
held_change -r). The Hold row is locked for each step, so captures never exceed the hold. A capture
given back later (work that failed through our fault) is a `refund` entry linked to the hold, never more
than it captured; the release and the refund go back to the API key that held it (billing.services.caps).

Every capture names a stable idempotency key derived from the caller's ids (e.g.
``research:<session id>:step:<step id>``), so a retried task captures once. A holder that works
longer than BILLING_HOLD_STALE_SECONDS between captures calls `credits_hold_touch` now and then:
the stale-hold sweep releases only holds nobody has touched (it re-checks under the row lock).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Sum
from django.utils import timezone

from billing.models import CreditEntry, EntryKind, Hold, HoldStatus
from billing.services.caps import month_start, spending_key_current
from billing.services.ledger import (
    _applied,
    _check_amount,
    _check_key,
    _existing,
    _insufficient,
    _post,
    credit_account_for,
    ledger_key,
    spend_check,
)
from exograph.accounts.models import User
from exograph.core.errors import Conflict, ValidationError

logger = logging.getLogger(__name__)


def credits_hold(*, account: User, amount: int, idempotency_key: str, reference: str = "") -> Hold:
    """Reserve `amount` credits (a `hold` entry), once per key, counted against the request's API key.

    Raises InsufficientCredits (402), KeyCapReached (403: the API key's monthly cap), ValidationError.
    """
    _check_amount(amount)
    key = ledger_key("hold", account.pk, _check_key(idempotency_key))
    existing = Hold.objects.filter(idempotency_key=key).first()
    if existing is not None:
        return existing
    credit_account = credit_account_for(user=account)
    spender = spending_key_current()
    try:
        with transaction.atomic():
            if spender is not None and spender.capped:
                spend_check(account=account, cost=amount, lock=True)  # the key's lock is held until the hold commits
            hold = Hold.objects.create(
                account=credit_account,
                amount=amount,
                reference=reference[:500],
                idempotency_key=key,
                last_activity_at=timezone.now(),
            )
            entry = _post(
                user=account,
                amount=-amount,
                held_change=amount,
                kind=EntryKind.HOLD,
                key=key,
                reference=reference or "hold",
                hold=hold,
                api_key_id=spender.id if spender is not None else None,
            )
            if entry is None:
                raise _insufficient(needed=amount, account=account)
    except IntegrityError:
        existing = Hold.objects.filter(idempotency_key=key).first()
        if existing is None:
            raise
        return existing
    return hold


def _locked(hold: Hold) -> Hold:
    # Not the user row: a detached account's user is NULL, and PostgreSQL locks no outer-joined side.
    return Hold.objects.select_for_update(of=("self", "account")).select_related("account__user").get(pk=hold.pk)


def _holder(hold: Hold) -> User:
    """The hold's account; a deleted account's holds were all released when it was deleted."""
    if hold.account.user is None:
        raise Conflict("This hold belongs to a deleted account.", code="hold_closed", hint="Open a new hold.")
    return hold.account.user


def _held_by(hold: Hold) -> int | None:
    """The API key a release or refund of this hold gives its credits back to: the key that held it, when it
    was held this month (an earlier month's spend is closed, billing.services.caps)."""
    return (
        CreditEntry.objects.filter(hold=hold, kind=EntryKind.HOLD, created__gte=month_start())
        .values_list("api_key_id", flat=True)
        .first()
    )


def _hold_closed() -> Conflict:
    return Conflict("This hold is already released.", code="hold_closed", hint="Open a new hold.")


def credits_capture(*, hold: Hold, amount: int, idempotency_key: str, reference: str = "") -> CreditEntry:
    """Spend `amount` of a hold (a `capture` entry), once per key: a repeat returns the first capture.

    The key is required and must be stable across retries (derive it from the caller's ids).
    Raises ValidationError (bad key, amount ≤ 0 or more than remains) and Conflict (hold closed).
    """
    _check_amount(amount)
    caller_key = _check_key(idempotency_key)
    with transaction.atomic():
        locked = _locked(hold)
        user = _holder(locked)
        key = ledger_key(f"capture:{locked.pk}", user.pk, caller_key)
        existing = _existing(key)
        if existing is not None:
            return existing
        if locked.status != HoldStatus.OPEN:
            raise _hold_closed()
        if amount > locked.remaining:
            raise ValidationError(
                f"Cannot capture {amount} credits; {locked.remaining} remain on this hold.",
                code="capture_exceeds_hold",
                hint=f"Capture at most {locked.remaining}.",
            )
        entry = _post(
            user=user,
            amount=0,
            held_change=-amount,
            kind=EntryKind.CAPTURE,
            key=key,
            reference=reference or locked.reference or "capture",
            hold=locked,
        )
        entry = _applied(entry, what="capture", user=user)  # held covers it: the hold row is locked
        locked.captured += amount
        locked.last_activity_at = timezone.now()
        locked.save(update_fields=["captured", "last_activity_at", "modified"])
    hold.captured, hold.last_activity_at = locked.captured, locked.last_activity_at
    return entry


def credits_hold_refund(*, hold: Hold, amount: int, idempotency_key: str, reason: str) -> CreditEntry:
    """Give back `amount` of what the hold captured (a `refund` entry linked to the hold), once per key: a repeat
    returns the first refund. Like the release, it is given back to the API key that held it this month, so a
    refunded step no longer counts against that key's monthly cap (billing.services.caps).

    Raises ValidationError (bad key, amount ≤ 0 or more than was captured and not yet refunded).
    """
    _check_amount(amount)
    caller_key = _check_key(idempotency_key)
    with transaction.atomic():
        locked = _locked(hold)
        user = _holder(locked)
        key = ledger_key("refund", user.pk, caller_key)
        existing = _existing(key)
        if existing is not None:
            return existing
        refunded = -int(
            CreditEntry.objects.filter(hold=locked, kind=EntryKind.REFUND).aggregate(total=Sum("amount"))["total"] or 0
        )
        refundable = int(locked.captured) - refunded
        if amount > refundable:
            raise ValidationError(
                f"Cannot refund {amount} credits; {refundable} of this hold's captures are not refunded yet.",
                code="refund_exceeds_captured",
                hint=f"Refund at most {refundable}.",
            )
        entry = _post(
            user=user,
            amount=amount,
            kind=EntryKind.REFUND,
            key=key,
            reference=f"refund of {locked.reference or 'hold'}: {reason}",
            hold=locked,
            api_key_id=_held_by(locked),
        )
        return _applied(entry, what="refund", user=user)  # a positive change always applies


def credits_hold_touch(*, hold: Hold) -> Hold:
    """Mark an open hold as in use (its last activity = now), so the stale-hold sweep skips it.

    For holders that work long between captures. Raises Conflict if the hold is already closed.
    """
    now = timezone.now()
    # One conditional UPDATE: it takes the row lock the sweep's release takes, and the sweep
    # re-checks last_activity_at under that lock, so a touch that commits first always wins.
    touched = Hold.objects.filter(pk=hold.pk, status=HoldStatus.OPEN).update(last_activity_at=now, modified=now)
    if not touched:
        raise _hold_closed()
    hold.last_activity_at = now
    return hold


def credits_release(*, hold: Hold, reason: str = "", idle_before: datetime | None = None) -> Hold:
    """Close a hold and return what was not captured (a `release` entry). Releasing twice is a no-op.

    With idle_before, only a hold untouched since then is released (the stale-hold sweep).
    """
    with transaction.atomic():
        locked = _locked(hold)
        if locked.status == HoldStatus.CLOSED:
            return locked
        if idle_before is not None and locked.last_activity_at >= idle_before:
            return locked
        remaining = locked.remaining
        if remaining > 0:
            holder = _holder(locked)
            entry = _post(
                user=holder,
                amount=remaining,
                held_change=-remaining,
                kind=EntryKind.RELEASE,
                key=f"release:{locked.pk}",
                reference=reason or locked.reference or "release",
                hold=locked,
                api_key_id=_held_by(locked),
            )
            _applied(entry, what="release", user=holder)
        locked.released = remaining
        locked.status = HoldStatus.CLOSED
        locked.last_activity_at = timezone.now()
        locked.save(update_fields=["released", "status", "last_activity_at", "modified"])
    hold.released, hold.status = locked.released, locked.status
    return locked


def holds_release_stale() -> int:
    """Release open holds idle for longer than BILLING_HOLD_STALE_SECONDS. Returns how many."""
    cutoff = timezone.now() - timedelta(seconds=settings.BILLING_HOLD_STALE_SECONDS)
    count = 0
    for hold in Hold.objects.filter(status=HoldStatus.OPEN, last_activity_at__lt=cutoff).only("pk"):
        released = credits_release(hold=hold, reason="released after inactivity", idle_before=cutoff)
        if released.status == HoldStatus.CLOSED:
            count += 1
            logger.info("released stale hold %s", hold.pk)
    return count
