"""Celery entry points of research (queue `research`): thin wrappers around research.services."""

from __future__ import annotations

import logging
from typing import Any

from celery import Task, shared_task
from celery.utils.time import get_exponential_backoff_interval
from django.conf import settings

from exograph.core.errors import ServiceUnavailable, TransientError
from exograph.core.queues import Queue
from research.services.running import RETRY_WAIT_SECONDS

logger = logging.getLogger(__name__)


# Transient failures (a dependency down) are retried by Celery: exponential backoff from `retry_backoff` seconds,
# capped at RETRY_WAIT_SECONDS (how long the pipeline parks its lease for the retry), with full jitter so sessions
# that failed together (the LLM down) do not all come back at once; at most RESEARCH_TASK_MAX_RETRIES times (read
# per call, so settings can change it). The last failure, or any other exception, fails the session: its steps'
# credits are refunded but for the sources it read into the user's graph (research_session_fail).
RUN_TASK_RETRY: dict[str, Any] = {
    "retry_backoff": 2,
    "retry_backoff_max": RETRY_WAIT_SECONDS,
    "retry_jitter": True,
}


def retry_countdown(task: Task) -> int:  # type: ignore[type-arg]
    """The wait before the next retry of `task`: Celery's own backoff (what autoretry_for uses) from the task's
    retry_backoff, retry_backoff_max and retry_jitter options."""
    return get_exponential_backoff_interval(
        factor=int(task.retry_backoff),
        retries=int(task.request.retries or 0),
        maximum=int(task.retry_backoff_max),
        full_jitter=bool(task.retry_jitter),
    )


@shared_task(
    bind=True, name="research.research_session_run", queue=Queue.RESEARCH.value, acks_late=True, **RUN_TASK_RETRY
)
def research_session_run_task(self: Task, session_id: str) -> str:  # type: ignore[type-arg]
    """Run or resume one session (see RUN_TASK_RETRY for its retries and failures)."""
    from research.models import ResearchSession
    from research.services import WAIT, research_session_fail, research_session_requeue, research_session_run

    try:
        outcome = research_session_run(session_id=session_id)
    except (TransientError, ServiceUnavailable) as exc:
        session = ResearchSession.objects.filter(pk=session_id).first()
        max_retries = int(settings.RESEARCH_TASK_MAX_RETRIES)
        if session is not None and int(self.request.retries or 0) < max_retries:
            logger.info(
                "research session %s: transient failure (%s), retry %d", session_id, exc.code, self.request.retries + 1
            )
            raise self.retry(exc=exc, countdown=retry_countdown(self), max_retries=max_retries) from exc
        if session is not None:
            research_session_fail(session=session, reason=exc.message)
        return "failed"
    except Exception:
        logger.exception("research session %s crashed", session_id)
        session = ResearchSession.objects.filter(pk=session_id).first()
        if session is not None:
            research_session_fail(session=session, reason="An internal error stopped this session.")
        return "failed"
    if outcome == WAIT:
        session = ResearchSession.objects.filter(pk=session_id).first()
        if session is not None:
            research_session_requeue(session=session, countdown=float(settings.RESEARCH_INGEST_POLL_SECONDS))
    return outcome


@shared_task(name="research.tasks.research_watch_due_task", queue=Queue.RESEARCH.value, acks_late=True)
def research_watch_due_task() -> int:
    """Celery beat: start the runs of watch topics that are due."""
    from research.services import research_watch_due

    return len(research_watch_due())
