"""How a research session ends: completed, failed (with what is refunded and what stays charged) or cancelled,
each releasing what is left of its hold; stopping a watch topic's schedule."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.db import transaction
from django.utils import timezone

from billing.models import Hold
from exograph.accounts.models import User
from exograph.core.errors import Conflict
from exograph.graphs.models import Graph
from research.events import research_event_send
from research.models import ACTIVE_STATUSES, ResearchSession, ResearchSource, ResearchStatus, ResearchStep

logger = logging.getLogger(__name__)


def hold_release_quietly(hold: Hold, *, reason: str) -> None:
    from billing.services import credits_release

    try:
        if Hold.objects.filter(pk=hold.pk).exists():
            credits_release(hold=hold, reason=reason)
    except Exception:  # the stale-hold sweep releases it later
        logger.exception("could not release hold %s", hold.pk)


def graph_drop_quietly(*, actor: User, graph: Graph) -> None:
    from exograph.graphs.services import graph_delete

    try:
        graph_delete(actor=actor, graph_id=graph.id)
    except Exception:
        logger.exception("could not remove research graph %s", graph.id)


def _close(
    session: ResearchSession,
    *,
    status: str,
    fields: dict[str, Any],
    reason: str,
    then: Callable[[ResearchSession], None] | None = None,
) -> bool:
    """Move an active session to a final status (once) and release what is left of its hold; `then` runs
    (once, only if this call closed it) in the same transaction, after the release."""
    now = timezone.now()
    with transaction.atomic():
        updated = ResearchSession.objects.filter(pk=session.pk, status__in=ACTIVE_STATUSES).update(
            status=status, completed_at=now, modified=now, **fields
        )
        session.refresh_from_db()
        if session.hold_id is not None:
            hold = Hold.objects.filter(pk=session.hold_id).first()
            if hold is not None:
                hold_release_quietly(hold, reason=reason)
        if updated and then is not None:
            then(session)
            session.refresh_from_db()
    if updated:
        research_event_send(session)
    return bool(updated)


def research_session_cancel(*, actor: User, session_id: str) -> ResearchSession:
    """Stop a running or pending session (release the rest of its hold), or stop a finished watch topic's
    schedule. Raises NotFound (missing or foreign) and Conflict (already finished and not watching)."""
    from research.selectors import research_session_get_for_user

    session = research_session_get_for_user(user=actor, session_id=session_id)
    if session.status in ACTIVE_STATUSES:
        _close(
            session,
            status=ResearchStatus.CANCELLED,
            fields={"note": "Cancelled by you.", "watch": "", "next_run_at": None},
            reason=f"research {session.id} cancelled",
        )
        logger.info("research session %s cancelled", session.id)
        return session
    if session.watch:
        research_watch_stop(session=session)
        return session
    raise Conflict(
        f"This session is already {session.status}.",
        code="research_finished",
        hint="Start a new session; only pending or running sessions (or watch topics) can be cancelled.",
    )


def research_watch_stop(*, session: ResearchSession) -> None:
    """Stop re-running a watch topic (its next run is not scheduled; a run under way finishes)."""
    ResearchSession.objects.filter(pk=session.pk).update(watch="", next_run_at=None, modified=timezone.now())
    session.refresh_from_db()
    research_event_send(session)


def research_session_fail(*, session: ResearchSession, reason: str, refund: bool = True) -> None:
    """Mark failed with the reason and release the rest of the hold.

    refund (the default: a failure of ours, e.g. an exception or a dependency down past its retries): what
    its steps captured is given back too, except the reads whose source is in the user's graph; the error
    says what was refunded and what stays charged. refund=False (the user's doing, e.g. the graph deleted):
    the captured steps stay paid. Either way a graph the session created that holds nothing is deleted."""
    if _close(
        session,
        status=ResearchStatus.FAILED,
        fields={"error": reason[:1000]},
        reason="research failed",
        then=(lambda closed: _refund_captured(closed, reason=reason)) if refund else None,
    ):
        logger.warning("research session %s failed", session.id)
        _drop_empty_created_graph(session)


def _kept_reads(session: ResearchSession) -> tuple[int, int]:
    """(credits, sources) of the read steps that delivered a source the user keeps: its document is in the
    session's graph, not deleted and not failed."""
    from exograph.documents.models import Document, DocumentStatus

    kept_documents = set(
        Document.objects.filter(research_sources__session=session, graph_id=session.graph_id, deleted_at__isnull=True)
        .exclude(status=DocumentStatus.FAILED)
        .values_list("id", flat=True)
    )
    kept_numbers = set(
        ResearchSource.objects.filter(session=session, document_id__in=kept_documents).values_list("number", flat=True)
    )
    credits = sources = 0
    for step in ResearchStep.objects.filter(session=session, key__startswith="read:", credits__gt=0):
        if (step.result or {}).get("number") in kept_numbers:
            credits += int(step.credits)
            sources += 1
    return credits, sources


def _refund_captured(session: ResearchSession, *, reason: str) -> None:
    """Give back what the failed session's steps captured, but for the reads it delivered; say so in error.
    Runs inside _close's transaction, after the hold's release (no step can capture any more)."""
    from billing.services import credits_hold_refund

    hold = Hold.objects.filter(pk=session.hold_id).first() if session.hold_id else None
    captured = int(hold.captured) if hold is not None else 0  # a session's hold is never deleted (its entries)
    kept, sources = _kept_reads(session) if captured else (0, 0)
    kept = min(kept, captured)
    refunded = captured - kept
    if hold is not None and refunded > 0:
        # A refund of the hold's captures: given back to the API key that held it too (its monthly cap).
        credits_hold_refund(
            hold=hold, amount=refunded, idempotency_key=f"research-refund:{session.id}", reason="research failed"
        )
    if kept:
        plural = "source" if sources == 1 else "sources"
        money = (
            f"{kept} credits stay charged for the {sources} {plural} read into graph {session.graph_name!r}; "
            f"the other {refunded} credits were refunded."
        )
    elif refunded:
        money = f"Nothing was charged: the {refunded} credits its steps used were refunded."
    else:
        money = "Nothing was charged: the credits held for it were released."
    ResearchSession.objects.filter(pk=session.pk).update(
        credits_spent=kept, error=f"{reason[: 998 - len(money)]} {money}"
    )
    logger.info("research session %s failed: %s refunded, %s kept", session.id, refunded, kept)


def _drop_empty_created_graph(session: ResearchSession) -> None:
    """Delete the research graph this session created if it holds no document (and no schedule will fill it)."""
    from exograph.documents.models import Document

    graph = session.graph
    if graph is None or not session.graph_created or session.watch:
        return
    if Document.objects.filter(graph=graph).exists():
        return
    if ResearchSession.objects.filter(graph=graph).exclude(pk=session.pk).exists():
        return
    graph_drop_quietly(actor=session.owner, graph=graph)


def research_session_complete(*, session: ResearchSession, report: dict[str, Any], note: str = "") -> None:
    """Mark completed with the report and release the rest of the hold. A graph the session created that holds
    nothing (its sources were cited where they are, or none was found) is deleted, as on failure."""
    if _close(
        session,
        status=ResearchStatus.COMPLETED,
        fields={"report": report, "note": note[:500], "step": "done", "percent": 100},
        reason=f"research {session.id} finished",
    ):
        _drop_empty_created_graph(session)
