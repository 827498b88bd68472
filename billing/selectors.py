"""Billing reads, always scoped to the asking account."""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.db.models import QuerySet

from billing.models import CreditAccount, CreditEntry, Hold
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


def ledger_list_for_user(*, actor: User) -> QuerySet[CreditEntry]:
    """The actor's ledger, newest first."""
    return CreditEntry.objects.filter(account__user_id=actor.pk).order_by("-created", "-id")


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
