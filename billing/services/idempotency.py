"""The stored Idempotency-Key answers of metered requests (billing.metering): forgetting old ones."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from billing.models import IdempotentRequest


def idempotency_records_purge() -> int:
    """Forget stored Idempotency-Key answers older than BILLING_IDEMPOTENCY_RETENTION_SECONDS. Returns how many."""
    cutoff = timezone.now() - timedelta(seconds=settings.BILLING_IDEMPOTENCY_RETENTION_SECONDS)
    deleted, _ = IdempotentRequest.objects.filter(modified__lt=cutoff).delete()
    return int(deleted)
