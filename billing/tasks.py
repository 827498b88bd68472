"""Celery entry points for billing: thin, idempotent, ids only. They import the services; the services send them by
name (billing.services.earnings.PAY_TASK), never import them."""

from __future__ import annotations

import logging

from celery import shared_task

from billing.services import (
    earnings_pay_for_record,
    earnings_sweep,
    holds_release_stale,
    idempotency_records_purge,
)
from exograph.core.queues import Queue

logger = logging.getLogger(__name__)


@shared_task(queue=Queue.BILLING.value, acks_late=True)
def earnings_pay_for_record_task(record_id: str) -> int:
    """Pay the contributors of one WorldUsage (earnings_record enqueues this after commit)."""
    return len(earnings_pay_for_record(record_id=record_id))


@shared_task(queue=Queue.BILLING.value, acks_late=True)
def earnings_sweep_task() -> int:
    """Periodic: pay every record still unpaid (a lost task never loses an earning)."""
    return earnings_sweep()


@shared_task(queue=Queue.BILLING.value, acks_late=True)
def holds_release_stale_task() -> int:
    """Periodic: release holds idle for longer than BILLING_HOLD_STALE_SECONDS."""
    return holds_release_stale()


@shared_task(queue=Queue.BILLING.value, acks_late=True)
def idempotency_records_purge_task() -> int:
    """Periodic: forget stored Idempotency-Key answers past their retention."""
    return idempotency_records_purge()
