"""Watch topics: a finished session re-run daily or weekly into the same graph, each run with its own hold."""

from __future__ import annotations

import logging
from datetime import date
from typing import Any

from django.utils import timezone

from exograph.core.errors import InsufficientCredits, NotFound, ValidationError
from exograph.core.scope import Scope
from research.models import ACTIVE_STATUSES, ResearchSession, WatchInterval
from research.services.sessions import WATCH_INTERVALS, research_session_create

logger = logging.getLogger(__name__)


def research_watch_due(*, now: Any = None) -> list[str]:
    """Start a run of every watch topic whose next run is due (each with the topic's budget as its own
    hold, into the same graph). A topic whose owner cannot pay is skipped until the next interval.
    Returns the ids of the runs started."""
    now = now or timezone.now()
    started: list[str] = []
    due = ResearchSession.objects.filter(
        watch__in=WatchInterval.values, next_run_at__lte=now, watch_of__isnull=True
    ).select_related("owner", "graph")
    for topic in due:
        interval = WATCH_INTERVALS[WatchInterval(topic.watch)]
        # Claim the slot first (conditional update): two beat ticks never start the same run twice.
        claimed = ResearchSession.objects.filter(pk=topic.pk, next_run_at=topic.next_run_at).update(
            next_run_at=now + interval
        )
        if not claimed:
            continue
        if (
            topic.graph is None
            or ResearchSession.objects.filter(watch_of=topic, status__in=ACTIVE_STATUSES).exists()
            or topic.status in ACTIVE_STATUSES
        ):
            continue  # graph deleted, or the previous run is still going
        try:
            run = research_session_watch_run(topic=topic)
        except (InsufficientCredits, ValidationError, NotFound) as exc:
            logger.info("watch topic %s skipped: %s", topic.pk, exc.code)
            continue
        started.append(str(run.id))
    return started


def research_session_watch_run(*, topic: ResearchSession) -> ResearchSession:
    """Start one run of a watch topic now (own budget, same graph, only unread sources)."""
    options = topic.options or {}
    return research_session_create(
        actor=topic.owner,
        query=topic.topic,
        budget_credits=topic.budget_credits,
        graph_id=topic.graph_id,
        scope=Scope(topic.scope),
        model=topic.model,
        sources=options.get("sources") or None,
        date_from=date.fromisoformat(options["date_from"]) if options.get("date_from") else None,
        date_to=date.fromisoformat(options["date_to"]) if options.get("date_to") else None,
        excluded_domains=options.get("excluded_domains") or None,
        watch_of=topic,
    )
