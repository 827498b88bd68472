"""Celery entry points of research (queue `research`): thin wrappers around research.services."""

from __future__ import annotations

import logging

from celery import Task, shared_task
from django.conf import settings

from exograph.core.errors import ServiceUnavailable, TransientError
from exograph.core.queues import Queue

logger = logging.getLogger(__name__)


@shared_task(bind=True, name="research.research_session_run", queue=Queue.RESEARCH.value, acks_late=True)
def research_session_run_task(self: Task, session_id: str) -> str:  # type: ignore[type-arg]
    """Run or resume one session. Transient failures retry with backoff; the last one fails the session."""
    from research.models import ResearchSession
    from research.services import WAIT, research_session_fail, research_session_requeue, research_session_run
    from research.services.pipeline import RETRY_WAIT_SECONDS

    try:
        outcome = research_session_run(session_id=session_id)
    except (TransientError, ServiceUnavailable) as exc:
        retries = int(self.request.retries or 0)
        session = ResearchSession.objects.filter(pk=session_id).first()
        if retries < int(settings.RESEARCH_TASK_MAX_RETRIES) and session is not None:
            logger.info("research session %s: transient failure (%s), retry %d", session_id, exc.code, retries + 1)
            raise self.retry(exc=exc, countdown=min(RETRY_WAIT_SECONDS, 2 ** (retries + 1))) from exc
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
