"""Contributor earnings, paid asynchronously from WorldUsage rows (`earnings_record`).

Graphs (search, World Graph lookups), and later chat and research, call `earnings_record` when
an answer used world knowledge contributed by other accounts. Only a keyed digest of what was
asked is kept, and the contributors' ledger entries carry a neutral reference: no account ever
sees what another one asked.

Earnings are minted by the platform: the querier pays nothing extra and no account is debited;
each `earning` entry simply adds settings.BILLING_EARNING_CREDITS to the contributor's balance. One earning per (querier, contributor, normalised query) ever; no
self-earnings; at most BILLING_EARNING_DAILY_CAP_PER_CONTRIBUTOR earnings per contributor
and BILLING_EARNING_DAILY_CAP_PER_PAIR per (querier, contributor) per UTC day.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, time

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.crypto import salted_hmac

from billing.models import CreditAccount, CreditEntry, EntryKind, UsageSource, WorldUsage
from billing.services.ledger import credit_account_for, credits_grant
from exograph.accounts.models import User
from exograph.celery import app as celery_app
from exograph.core.errors import ValidationError
from exograph.core.queues import Queue

logger = logging.getLogger(__name__)

EARNING_REFERENCE = "world knowledge used"
DIGEST_SALT = "billing.earnings.query"
# Sent by name: the services never import the tasks (billing.tasks imports the services, one way).
PAY_TASK = "billing.tasks.earnings_pay_for_record_task"
_DIGEST = re.compile(r"[0-9a-f]{64}")


def earnings_query_digest(query: str) -> str:
    """A keyed digest (HMAC-SHA256 under SECRET_KEY) of the normalised query: equal for the same
    question, and, unlike a plain hash, no one without the key can test a guess against it."""
    normalised = " ".join(query.lower().split())
    return salted_hmac(DIGEST_SALT, normalised, algorithm="sha256").hexdigest()


def earnings_record(
    *,
    querier: User,
    contributor_ids: Sequence[int],
    source: UsageSource | str,
    query: str | None = None,
    query_digest: str | None = None,
) -> WorldUsage | None:
    """Record that an answer to querier used world knowledge of other accounts; pays them after commit.

    Give the query (only its digest is stored) or its digest. Returns None when no one else
    contributed. Raises ValidationError (no query or digest, both, a malformed digest, an unknown source)."""
    if (query is None) == (query_digest is None):
        raise ValidationError(
            "earnings_record needs exactly one of query and query_digest.", code="invalid_usage_record"
        )
    if query_digest is not None and not _DIGEST.fullmatch(query_digest):
        raise ValidationError("query_digest is not a digest from earnings_query_digest().", code="invalid_usage_record")
    if source not in UsageSource.values:
        raise ValidationError(f"Unknown usage source {str(source)[:30]!r}.", code="invalid_usage_record")
    others = sorted({int(c) for c in contributor_ids if c is not None and int(c) != querier.pk})
    if not others:
        return None
    digest = query_digest if query_digest is not None else earnings_query_digest(query or "")
    usage = WorldUsage.objects.create(
        querier=querier, query_digest=digest, source=UsageSource(source), contributor_ids=others
    )
    # Pay after commit; the periodic sweep pays any usage whose task was lost or could not be sent.
    transaction.on_commit(lambda: _pay_soon(str(usage.id)))
    return usage


def _pay_soon(record_id: str) -> None:
    """Queue the payment of one usage record. A broker that is down must not fail the answer or research step that
    used the knowledge (it is committed and paid for): the record stays unpaid and earnings_sweep pays it."""
    try:
        celery_app.signature(PAY_TASK, args=(record_id,), queue=Queue.BILLING.value).delay()
    except Exception as exc:
        logger.warning(
            "world usage %s: could not queue its payment (%s); the sweep pays it", record_id, type(exc).__name__
        )


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
    """Pay the contributors of one WorldUsage (idempotent; sets paid_at). Returns the new earning entries."""
    amount = settings.BILLING_EARNING_CREDITS
    paid: list[CreditEntry] = []
    try:
        record_id = uuid.UUID(str(record_id))
    except ValueError:
        logger.warning("not a world usage id")
        return paid
    with transaction.atomic():
        record = WorldUsage.objects.select_for_update().filter(pk=record_id).first()
        if record is None:
            logger.info("world usage %s vanished before payment", record_id)
            return paid
        if record.paid_at is not None:
            return paid
        now = timezone.now()
        day_start = datetime.combine(now.astimezone(UTC).date(), time.min, tzinfo=UTC)
        digest = record.query_digest
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
                reference=EARNING_REFERENCE,  # never the query: the contributor must not learn it
                counterparty=record.querier,
            )
            if created:
                paid.append(entry)
        record.paid_at = now
        record.save(update_fields=["paid_at", "modified"])
    return paid


def earnings_sweep(*, limit: int = 500) -> int:
    """Pay every WorldUsage not yet paid (oldest first). Returns how many were settled."""
    ids = list(WorldUsage.objects.filter(paid_at__isnull=True).order_by("created").values_list("pk", flat=True)[:limit])
    done = 0
    for record_id in ids:
        try:
            earnings_pay_for_record(record_id=record_id)
            done += 1
        except Exception:  # one bad record must not stop the sweep
            logger.exception("paying world usage %s failed", record_id)
    return done
