"""Celery entry points of core: thin, ids only."""

from __future__ import annotations

from celery import shared_task

from exograph.core.queues import Queue


@shared_task(name="core.leases_sweep", queue=Queue.DEFAULT.value, acks_late=True)
def leases_sweep_task() -> dict[str, int]:
    """Periodic: resume (or give up) work whose runner stopped renewing its lease (exograph/core/leases.py)."""
    from exograph.core.leases import leases_sweep

    return leases_sweep()
