"""Celery entry points for billing: thin, idempotent, ids only."""

from __future__ import annotations

import logging

from celery import shared_task

from exograph.core.queues import Queue

logger = logging.getLogger(__name__)


@shared_task(queue=Queue.BILLING.value, acks_late=True)
def earnings_pay_for_record_task(record_id: str) -> int:
    """Pay the contributors of one WorldUsage (earnings_record enqueues this after commit)."""
    from billing.services import earnings_pay_for_record

    return len(earnings_pay_for_record(record_id=record_id))


@shared_task(queue=Queue.BILLING.value, acks_late=True)
def earnings_sweep_task() -> int:
    """Periodic: pay every record still unpaid (a lost task never loses an earning)."""
    from billing.services import earnings_sweep

    return earnings_sweep()


@shared_task(queue=Queue.BILLING.value, acks_late=True)
def holds_release_stale_task() -> int:
    """Periodic: release holds idle for longer than BILLING_HOLD_STALE_SECONDS."""
    from billing.services import holds_release_stale

    return holds_release_stale()


@shared_task(queue=Queue.BILLING.value, acks_late=True)
def idempotency_records_purge_task() -> int:
    """Periodic: forget stored Idempotency-Key answers past their retention."""
    from billing.services import idempotency_records_purge

    return idempotency_records_purge()
