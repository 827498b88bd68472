"""Running a research session: the entry point the run task calls, under the session's lease.

A run holds the session's lease (kind ``research.session``, exograph/core/leases.py) while it works: if its
worker dies, the lease expires and the periodic sweep queues the session again (it resumes at the first
missing step, so nothing is charged twice); after the kind's max_recoveries interruptions the sweep fails the
session with a reason and releases the rest of its hold. A duplicate delivery finds the lease held and skips.
"""

from __future__ import annotations

import logging
import time

from django.conf import settings
from django.utils import timezone

from exograph.core.errors import ExoGraphError, ServiceUnavailable, TransientError
from exograph.core.leases import LeaseBusy, LeaseKind, lease_hold, lease_kind_register, lease_park
from exograph.core.models import Lease
from research.models import ACTIVE_STATUSES, ResearchSession, ResearchStatus
from research.services.closing import research_session_fail
from research.services.pipeline import STOPPED, WAIT, _Run
from research.services.steps import Stopped

logger = logging.getLogger(__name__)

RESEARCH_LEASE = "research.session"
RETRY_WAIT_SECONDS = 60  # the longest countdown of the run task's retries (research/tasks.py)


def research_session_run(*, session_id: str) -> str:
    """Run (or resume) a session's pipeline under its lease. Returns done, wait (re-run later: sources still
    ingesting) or stopped (cancelled, finished, gone, or another live run holds it). Raises
    TransientError/ServiceUnavailable for the task to retry; any other error fails the session (recorded,
    hold released)."""
    session = ResearchSession.objects.filter(pk=session_id).only("status", "step").first()
    if session is None or session.status not in ACTIVE_STATUSES:
        return STOPPED
    step = session.step or "plan"
    try:
        with lease_hold(kind=RESEARCH_LEASE, subject_id=str(session.pk), step=step):
            outcome = _run_leased(session_id)
    except (TransientError, ServiceUnavailable):
        # The task retries after a countdown (at most RETRY_WAIT_SECONDS): the parked lease watches the message.
        lease_park(kind=RESEARCH_LEASE, subject_id=str(session.pk), step=step, seconds=RETRY_WAIT_SECONDS)
        raise
    except LeaseBusy:
        logger.info("research session %s: another live run holds it; this delivery skips", session_id)
        return STOPPED
    if outcome == WAIT:  # re-run in RESEARCH_INGEST_POLL_SECONDS (research_session_requeue): watched meanwhile
        lease_park(
            kind=RESEARCH_LEASE, subject_id=str(session.pk), step=step, seconds=settings.RESEARCH_INGEST_POLL_SECONDS
        )
    return outcome


def _run_leased(session_id: str) -> str:
    # Read again now that the lease is ours: the run that held it may have finished or stored more steps.
    session = ResearchSession.objects.select_related("owner", "graph").filter(pk=session_id).first()
    if session is None or session.status not in ACTIVE_STATUSES:
        return STOPPED
    if session.graph is None:
        # the user's doing: the steps it finished (if any) stay paid
        research_session_fail(session=session, reason="The target graph was deleted.", refund=False)
        return STOPPED
    now = timezone.now()
    ResearchSession.objects.filter(pk=session.pk, status=ResearchStatus.PENDING).update(
        status=ResearchStatus.RUNNING, started_at=now, modified=now
    )
    session.refresh_from_db()
    started = time.monotonic()
    try:
        outcome = _Run(session).go()
    except Stopped:
        logger.info("research session %s stopped", session.id)
        if ResearchSession.objects.filter(pk=session.pk, status__in=ACTIVE_STATUSES).exists():
            # Not cancelled, yet its hold is closed (the stale-hold sweep released it): it cannot spend any more.
            research_session_fail(
                session=session,
                reason="The credits held for this session were released before it finished. Start it again.",
            )
        return STOPPED
    except (TransientError, ServiceUnavailable):
        raise
    except ExoGraphError as exc:
        research_session_fail(session=session, reason=exc.message)
        return STOPPED
    logger.info("research session %s: %s after %.1fs", session.id, outcome, time.monotonic() - started)
    return outcome


# --- interrupted sessions (the research lease) ------------------------------------------------------


def _lease_active(session_id: str) -> bool:
    return ResearchSession.objects.filter(pk=session_id, status__in=ACTIVE_STATUSES).exists()


def _lease_resume(lease: Lease) -> None:
    """Queue the interrupted session again: it resumes at its first missing step (stored steps stay paid once)."""
    from exograph.celery import app as celery_app
    from exograph.core.queues import Queue
    from research.services.sessions import RUN_TASK

    celery_app.signature(RUN_TASK, args=(lease.subject_id,), queue=Queue.RESEARCH.value).delay()


def _lease_give_up(lease: Lease, reason: str) -> None:
    session = ResearchSession.objects.filter(pk=lease.subject_id).first()
    if session is None:
        return
    research_session_fail(
        session=session,
        reason=f"{reason} Start the research again to retry.",
    )


lease_kind_register(LeaseKind(name=RESEARCH_LEASE, active=_lease_active, resume=_lease_resume, give_up=_lease_give_up))
