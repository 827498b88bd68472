"""Monthly credit caps of API keys: what the requests made with one key may spend per calendar month (UTC).

Authentication names the request's key (`exograph.core.spending`, from accounts.authentication); every charge
and hold made while it is current carries the key's id on its ledger entry, and the refund or release of
such a spend made in the same month carries it too. A key's spend this month is then one indexed sum:

    spent = -(sum of amount) over its charge, hold, refund and release entries since the month began

A capped key's charge or hold runs in one transaction that first locks the key's row: concurrent
spends of one key queue on that lock, and each sums the committed entries (READ COMMITTED: a new
snapshot per statement) after the one before it committed, so a cap is never overrun. Uncapped keys
skip the lock (their spend is recorded all the same, so a cap set mid-month counts what was spent).

Billing imports no feature app: the key row is accounts' (a lower layer), read by id; the spending-key context is
core's, re-exported here.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from django.db.models import Sum
from django.utils import timezone

from billing.models import CreditEntry, EntryKind
from exograph.accounts.models import ApiKey
from exograph.core.errors import PermissionDenied
from exograph.core.spending import (
    SpendingKey,
    spending_key,
    spending_key_clear,
    spending_key_current,
    spending_key_reset,
    spending_key_use,
)

__all__ = [
    "SPEND_KINDS",
    "KeyCapReached",
    "SpendingKey",
    "key_cap_check",
    "key_spent_this_month",
    "month_start",
    "next_month_start",
    "spending_key",
    "spending_key_clear",
    "spending_key_current",
    "spending_key_reset",
    "spending_key_use",
]

SPEND_KINDS = (EntryKind.CHARGE, EntryKind.HOLD, EntryKind.REFUND, EntryKind.RELEASE)


def month_start(now: datetime | None = None) -> datetime:
    """The first instant of the calendar month (UTC) of `now`."""
    moment = (now or timezone.now()).astimezone(UTC)
    return moment.replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def next_month_start(now: datetime | None = None) -> datetime:
    start = month_start(now)
    return start.replace(year=start.year + 1, month=1) if start.month == 12 else start.replace(month=start.month + 1)


def key_spent_this_month(*, key_ids: Iterable[int], now: datetime | None = None) -> dict[int, int]:
    """Credits spent this calendar month (UTC) by each key (0 for keys that spent nothing)."""
    ids = list(key_ids)
    spent = dict.fromkeys(ids, 0)
    if not ids:
        return spent
    rows = (
        CreditEntry.objects.filter(api_key_id__in=ids, created__gte=month_start(now), kind__in=SPEND_KINDS)
        .values("api_key_id")
        .annotate(total=Sum("amount"))
    )
    for row in rows:
        spent[int(row["api_key_id"])] = max(0, -int(row["total"] or 0))
    return spent


class KeyCapReached(PermissionDenied):
    """The key's monthly credit cap does not cover this spend (403: the key's permission, not the balance)."""

    code = "key_monthly_cap_reached"


def key_cap_check(*, key_id: int, cost: int, lock: bool) -> None:
    """Refuse `cost` if it would take the key past its monthly cap; lock=True locks the key's row first.

    A spend (charge, hold) locks, inside the transaction that then writes it, so the lock is held until it
    commits; a quote (dry_run) asks the same question without locking and changes nothing.
    Raises KeyCapReached naming the cap, what was spent, what is left and when the cap resets.
    """
    rows = ApiKey.objects.select_for_update() if lock else ApiKey.objects
    cap = rows.filter(pk=key_id).values_list("monthly_credit_cap", flat=True).first()
    if cap is None:
        return
    now = timezone.now()
    spent = key_spent_this_month(key_ids=[key_id], now=now)[key_id]
    if spent + cost <= cap:
        return
    left = max(0, cap - spent)
    resets = next_month_start(now)
    raise KeyCapReached(
        f"This API key's monthly credit cap is {cap} credits; {spent} were spent this month, {left} left, "
        f"and this needs {cost}.",
        hint=f"Raise the key's monthly cap on the API keys page (or PATCH /api/v1/keys/{key_id}/), "
        f"or wait until the cap resets on {resets:%Y-%m-%d} 00:00 UTC.",
        extra={
            "monthly_credit_cap": cap,
            "spent_this_month": spent,
            "remaining": left,
            "needed": cost,
            "resets": resets.isoformat(),
        },
    )
