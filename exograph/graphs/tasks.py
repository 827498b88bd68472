"""Celery entry points for graphs: thin, idempotent, ids only."""

from __future__ import annotations

from celery import shared_task

from exograph.core.queues import Queue


@shared_task(queue=Queue.DEFAULT.value, acks_late=True)
def graph_vectors_compact_task() -> int:
    """Periodic: drop orphan vector nodes of every graph and rebuild their vector indexes."""
    from exograph.graphs.services import graph_vectors_compact_all

    return graph_vectors_compact_all()
