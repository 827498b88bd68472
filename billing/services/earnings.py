"""Contributor earnings, paid asynchronously from graphs' WorldQueryRecord rows.

Earnings are minted by the platform: the querier pays nothing extra and no account is
debited; each `earning` entry simply adds settings.BILLING_EARNING_CREDITS to the
contributor's balance. One earning per (querier, contributor, normalised query) ever; no
self-earnings; at most BILLING_EARNING_DAILY_CAP_PER_CONTRIBUTOR earnings per contributor
and BILLING_EARNING_DAILY_CAP_PER_PAIR per (querier, contributor) per UTC day.
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from datetime import UTC, datetime, time

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from billing.models import CreditAccount, CreditEntry, EntryKind
from billing.services.ledger import credit_account_for, credits_grant
from exograph.accounts.models import User
from exograph.graphs.models import WorldQueryRecord

logger = logging.getLogger(__name__)


def _query_digest(query: str) -> str:
    normalised = " ".join(query.lower().split())
    return hashlib.sha256(normalised.encode("utf-8")).hexdigest()[:40]


def _contributor_ids(raw: object, querier_id: int) -> list[int]:
    ids: set[int] = set()
    for value in raw if isinstance(raw, list) else []:
        if isinstance(value, bool):
            continue
        try:
            ident = int(value)
        except (TypeError, ValueError):
            continue
        if ident != querier_id:
            ids.add(ident)
    return sorted(ids)  # a fixed lock order: no deadlocks between concurrent payers


def earnings_pay_for_record(*, record_id: uuid.UUID | str) -> list[CreditEntry]:
    """Pay the contributors of one world query (idempotent; sets paid_at). Returns the new earning entries."""
    amount = settings.BILLING_EARNING_CREDITS
    paid: list[CreditEntry] = []
    try:
        record_id = uuid.UUID(str(record_id))
    except ValueError:
        logger.warning("not a world query record id: %r", str(record_id)[:50])
        return paid
    with transaction.atomic():
        record = WorldQueryRecord.objects.select_for_update().filter(pk=record_id).first()
        if record is None:
            logger.info("world query record %s vanished before payment", record_id)
            return paid
        if record.paid_at is not None:
            return paid
        now = timezone.now()
        day_start = datetime.combine(now.astimezone(UTC).date(), time.min, tzinfo=UTC)
        digest = _query_digest(record.query)
        contributors = User.objects.filter(
            pk__in=_contributor_ids(record.contributor_ids, record.querier_id), is_active=True, is_platform=False
        ).order_by("pk")
        # Earnings are paid only for queries from verified accounts: throwaway signups cannot farm credits.
        querier_verified = User.objects.filter(pk=record.querier_id, email_verified_at__isnull=False).exists()
        for contributor in contributors if amount > 0 and querier_verified else []:
            key = f"earning:{record.querier_id}:{contributor.pk}:{digest}"
            if CreditEntry.objects.filter(idempotency_key=key).exists():
                continue
            # Lock the contributor's balance row so the daily caps are counted exactly.
            account = CreditAccount.objects.select_for_update().get(pk=credit_account_for(user=contributor).pk)
            today = CreditEntry.objects.filter(account=account, kind=EntryKind.EARNING, created__gte=day_start)
            if today.count() >= settings.BILLING_EARNING_DAILY_CAP_PER_CONTRIBUTOR:
                continue
            if today.filter(counterparty_id=record.querier_id).count() >= settings.BILLING_EARNING_DAILY_CAP_PER_PAIR:
                continue
            entry, created = credits_grant(
                account=contributor,
                amount=amount,
                kind=EntryKind.EARNING,
                key=key,
                reference=f"query: {record.query}",
                counterparty=record.querier,
            )
            if created:
                paid.append(entry)
        record.paid_at = now
        record.save(update_fields=["paid_at", "modified"])
    return paid


def earnings_sweep(*, limit: int = 500) -> int:
    """Pay every world query record not yet paid (oldest first). Returns how many records were settled."""
    ids = list(
        WorldQueryRecord.objects.filter(paid_at__isnull=True).order_by("created").values_list("pk", flat=True)[:limit]
    )
    done = 0
    for record_id in ids:
        try:
            earnings_pay_for_record(record_id=record_id)
            done += 1
        except Exception:  # one bad record must not stop the sweep
            logger.exception("paying world query record %s failed", record_id)
    return done
