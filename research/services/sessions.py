"""Research session use cases: quote and create (validate, hold the budget, queue), start, requeue.

The request's checks are in `validation`, a session's end (complete, fail, cancel) in `closing`, watch topics'
runs in `watch`."""

from __future__ import annotations

import logging
import uuid
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Unpack

from django.db import transaction
from django.utils import timezone

from exograph.accounts.models import User
from exograph.core.errors import Conflict
from exograph.core.scope import Scope
from exograph.graphs.models import Graph, GraphKind
from research.models import ResearchSession, WatchInterval
from research.services.closing import graph_drop_quietly, hold_release_quietly, research_session_fail
from research.services.validation import ResearchAsk, checked_request

if TYPE_CHECKING:
    from billing.services import Quote, Spent

logger = logging.getLogger(__name__)

RUN_TASK = "research.research_session_run"
WATCH_INTERVALS = {WatchInterval.DAILY: timedelta(days=1), WatchInterval.WEEKLY: timedelta(days=7)}


def _research_graph(*, actor: User, topic: str, scope: Scope) -> Graph:
    """A new research graph named after the topic (a number added if the name is taken)."""
    from exograph.graphs.services import graph_create

    base = f"Research: {topic}"[:180].rstrip()
    for attempt in range(1, 50):
        name = base if attempt == 1 else f"{base} ({attempt})"
        try:
            return graph_create(actor=actor, name=name, scope=scope, kind=GraphKind.RESEARCH)
        except Conflict as exc:
            if exc.code != "graph_name_taken":
                raise
    return graph_create(actor=actor, name=f"{base} {uuid.uuid4().hex[:6]}", scope=scope, kind=GraphKind.RESEARCH)


def research_session_quote(*, actor: User, **asked: Unpack[ResearchAsk]) -> Quote:
    """What research_session_create would decide about money, without holding or creating anything: the hold
    it would take (the budget, default the model's price) and whether this request may spend it (the API
    key's monthly cap, then the balance: the decision create takes); `refusal` is create's 403 or 402.
    Raises what create raises on bad input (ValidationError, NotFound)."""
    from billing.services import credits_quote_amount

    return credits_quote_amount(account=actor, cost=checked_request(actor=actor, **asked).budget)


def research_session_create(
    *,
    actor: User,
    idempotency_key: str | None = None,
    watch_of: ResearchSession | None = None,
    **asked: Unpack[ResearchAsk],
) -> ResearchSession:
    """Validate, hold the budget under `idempotency_key` (REST: the request's money key, so a replayed
    Idempotency-Key holds once; None: a fresh key, a watch run), create the session `pending` (and, without
    graph_id, its research graph), queue the pipeline on commit. The pipeline captures each step from the hold
    and releases the rest. Raises ValidationError (400), NotFound (404 graph), KeyCapReached (403: the API key's
    monthly cap), InsufficientCredits (402); on any error nothing is held or written (the hold is released)."""
    from billing.services import credits_hold, credits_quote_amount

    checked = checked_request(actor=actor, **asked)
    topic, budget, graph, interval = checked.topic, checked.budget, checked.graph, checked.interval
    refusal = credits_quote_amount(account=actor, cost=budget).refusal  # the quote's decision (the hold re-checks)
    if refusal is not None:
        raise refusal
    session_id = uuid.uuid4()
    credit_hold = credits_hold(
        account=actor,
        amount=budget,
        idempotency_key=idempotency_key or f"research.create:{uuid.uuid4().hex}",
        reference=f"research {session_id}",
    )
    created_graph = None
    try:
        if graph is None:
            graph = created_graph = _research_graph(actor=actor, topic=topic, scope=checked.scope)
        with transaction.atomic():
            session = ResearchSession.objects.create(
                id=session_id,
                owner=actor,
                topic=topic,
                model=checked.model,
                scope=checked.scope,
                graph=graph,
                graph_name=graph.name,
                graph_created=created_graph is not None,
                budget_credits=budget,
                hold=credit_hold,
                options={
                    "sources": checked.kinds,
                    "date_from": checked.date_from.isoformat() if checked.date_from else None,
                    "date_to": checked.date_to.isoformat() if checked.date_to else None,
                    "excluded_domains": checked.domains,
                },
                watch=interval if watch_of is None else "",
                watch_of=watch_of,
                next_run_at=timezone.now() + WATCH_INTERVALS[WatchInterval(interval)]
                if interval and watch_of is None
                else None,
            )
            # Recorded before it is announced: if this process dies between the commit and the send, the lease
            # sweep starts the session (the message is sent on commit; lease_queued then gives it the queue's window).
            token = _run_due(str(session.id))
            transaction.on_commit(lambda: _queue(str(session.id), token))
    except BaseException:
        hold_release_quietly(credit_hold, reason="research session not created")
        if created_graph is not None:
            graph_drop_quietly(actor=actor, graph=created_graph)
        raise
    logger.info("research session %s created by user %s (budget %s)", session.id, actor.pk, budget)
    return session


def research_session_start(*, actor: User, idempotency_key: str, **asked: Any) -> tuple[ResearchSession, Spent]:
    """The create use case as a door calls it (REST, the web form; MCP through REST): research_session_create
    under the request's money key, and what it spent (the hold: credits_charged = credits_held) with the balance
    after. `asked` is research_session_create's arguments, as research_session_quote takes them."""
    from billing.services import Spent, credit_balance

    session = research_session_create(actor=actor, idempotency_key=idempotency_key, **asked)
    held = int(session.hold.amount) if session.hold is not None else 0
    return session, Spent(held, balance=credit_balance(account=actor), credits_held=held)


def _run_due(session_id: str) -> uuid.UUID:
    """Record the session's run as due (call it in the transaction that creates the session): if its message is
    never sent (the web or beat process died after the commit), the lease sweep starts it. Returns the token."""
    from exograph.core.leases import lease_due
    from research.services.running import RESEARCH_LEASE  # running imports this module

    return lease_due(kind=RESEARCH_LEASE, subject_id=session_id, step="plan")


def _queue(session_id: str, token: uuid.UUID | None = None) -> None:
    from exograph.celery import app as celery_app
    from exograph.core.leases import lease_queued
    from exograph.core.queues import Queue
    from research.services.running import RESEARCH_LEASE

    try:
        celery_app.signature(RUN_TASK, args=(session_id,), queue=Queue.RESEARCH.value).delay()
    except Exception:  # the broker is down: say so on the session and give the credits back
        logger.exception("could not queue research session %s", session_id)
        session = ResearchSession.objects.filter(pk=session_id).first()
        if session is not None:
            research_session_fail(session=session, reason="The research queue is unavailable. Start the session again.")
        return
    lease_queued(kind=RESEARCH_LEASE, subject_id=session_id, token=token)


def research_session_requeue(*, session: ResearchSession, countdown: float) -> None:
    """Run the pipeline again in countdown seconds (waiting for its sources' ingest)."""
    from exograph.celery import app as celery_app
    from exograph.core.queues import Queue

    if celery_app.conf.task_always_eager:
        # Eager (tests inside one transaction): ingest runs after that transaction; a re-run now would loop.
        logger.info("research session %s waits for ingest; eager mode does not re-queue", session.id)
        return

    celery_app.signature(RUN_TASK, args=(str(session.id),), queue=Queue.RESEARCH.value).apply_async(countdown=countdown)
