"""Billing reads, always scoped to the asking account."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, time, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Count, QuerySet, Sum
from django.db.models.functions import TruncDate
from django.utils import timezone

from billing.models import CreditAccount, CreditEntry, EntryKind, Hold
from billing.services.ledger import signup_grant_key
from exograph.accounts.models import User
from exograph.core.errors import NotFound


def credit_summary_for_user(*, actor: User) -> dict[str, Any]:
    """Balance, held credits and plan of the actor (zeros before the first entry)."""
    account = CreditAccount.objects.filter(user_id=actor.pk).first()
    plan = account.plan if account else settings.BILLING_DEFAULT_PLAN
    limits = settings.BILLING_PLANS.get(plan) or settings.BILLING_PLANS[settings.BILLING_DEFAULT_PLAN]
    return {
        "balance": int(account.balance) if account else 0,
        "held": int(account.held) if account else 0,
        "plan": plan,
        "rate_limits": {"per_minute": limits["per_minute"], "per_day": limits["per_day"]},
        "purchases_enabled": bool(settings.USE_STRIPE),
    }


def signup_grant_received(*, user: User) -> bool:
    """Whether user's account got the signup grant (it is once per email address: billing.credits_grant_signup)."""
    return CreditEntry.objects.filter(account__user=user, kind=EntryKind.SIGNUP_GRANT).exists()


def signup_grant_offered(*, user: User) -> int:
    """The credits verifying user's address will grant: settings.BILLING_SIGNUP_CREDITS, or 0 when the address
    (however written) already had its grant, e.g. under a deleted account."""
    if CreditEntry.objects.filter(idempotency_key=signup_grant_key(email=user.email)).exists():
        return 0
    return max(0, int(settings.BILLING_SIGNUP_CREDITS))


def ledger_list_for_user(*, actor: User, kind: str | None = None) -> QuerySet[CreditEntry]:
    """The actor's ledger, newest first; only entries of `kind` when given (an unknown kind matches nothing)."""
    entries = CreditEntry.objects.filter(account__user_id=actor.pk)
    if kind:
        entries = entries.filter(kind=kind)
    return entries.order_by("-created", "-id")


def hold_get_for_user(*, actor: User, hold_id: object) -> Hold:
    """One of the actor's holds. Raises NotFound for a missing or foreign hold alike."""
    try:
        parsed = uuid.UUID(str(hold_id))
    except ValueError:  # a malformed id is just "not found"
        parsed = None
    hold = Hold.objects.filter(pk=parsed, account__user_id=actor.pk).first() if parsed else None
    if hold is None:
        raise NotFound("No such hold.", hint="Check the id; holds belong to the account that made them.")
    return hold


def pack_list() -> list[dict[str, Any]]:
    """The credit packs on sale (settings.BILLING_PACKS)."""
    return [
        {"id": pack_id, "credits": pack["credits"], "price": pack["price"], "currency": settings.STRIPE_CURRENCY}
        for pack_id, pack in settings.BILLING_PACKS.items()
    ]


USAGE_KINDS = (EntryKind.CHARGE, EntryKind.CAPTURE)


def usage_daily_for_user(*, actor: User, days: int = 30) -> list[dict[str, Any]]:
    """The actor's metered actions and credits spent per UTC day, oldest first, one row per day (zeros included)."""
    today = timezone.now().astimezone(UTC).date()
    first = today - timedelta(days=days - 1)
    start = datetime.combine(first, time.min, tzinfo=UTC)
    rows = (
        CreditEntry.objects.filter(account__user_id=actor.pk, kind__in=USAGE_KINDS, created__gte=start)
        .annotate(day=TruncDate("created", tzinfo=UTC))
        .values("day")
        .annotate(actions=Count("id"), spent=Sum("amount"))
    )
    by_day = {row["day"]: row for row in rows}
    out: list[dict[str, Any]] = []
    for offset in range(days):
        day = first + timedelta(days=offset)
        row = by_day.get(day)
        out.append(
            {"day": day, "actions": int(row["actions"]) if row else 0, "spent": -int(row["spent"] or 0) if row else 0}
        )
    return out


def earnings_total_for_user(*, actor: User) -> dict[str, int]:
    """Credits the actor earned from world contributions: all time and in the last 30 days."""
    entries = CreditEntry.objects.filter(account__user_id=actor.pk, kind=EntryKind.EARNING)
    since = timezone.now() - timedelta(days=30)
    total = entries.aggregate(total=Sum("amount"))["total"] or 0
    recent = entries.filter(created__gte=since).aggregate(total=Sum("amount"))["total"] or 0
    return {"total": int(total), "last_30_days": int(recent)}
