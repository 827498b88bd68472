"""Research session use cases: create (validate, hold the budget, queue), cancel, fail, finish, watch stop."""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from billing.models import Hold
from exograph.accounts.models import User
from exograph.core.errors import Conflict, InsufficientCredits, NotFound, ValidationError
from exograph.core.scope import Scope
from exograph.graphs.models import Graph, GraphKind
from exograph.sources.base import SearchOptions
from exograph.sources.filters import MAX_EXCLUDED_DOMAINS, normalize_domain, search_options
from research.events import research_event_send
from research.models import (
    ACTIVE_STATUSES,
    ResearchModel,
    ResearchSession,
    ResearchSource,
    ResearchStatus,
    ResearchStep,
    WatchInterval,
)

if TYPE_CHECKING:
    from billing.services import Quote, Spent

logger = logging.getLogger(__name__)

SOURCE_KINDS = ("paper", "article", "local")
DEFAULT_SOURCES = ("paper", "article", "local")
RUN_TASK = "research.research_session_run"
WATCH_INTERVALS = {WatchInterval.DAILY: timedelta(days=1), WatchInterval.WEEKLY: timedelta(days=7)}


def research_price(model: str) -> int:
    """The model's price (BILLING_PRICES research.<model>): the least budget and the default one."""
    from billing.prices import price_for

    return price_for(f"research.{model}")


def _check_query(query: object) -> str:
    if not isinstance(query, str):
        raise ValidationError("query must be a string.", code="invalid_query", hint='Send {"query": "your topic"}.')
    text = " ".join(query.replace("\x00", " ").split())
    low, high = settings.RESEARCH_QUERY_MIN_CHARS, settings.RESEARCH_QUERY_MAX_CHARS
    if len(text) < low or len(text) > high:
        raise ValidationError(
            f"query must be {low} to {high:,} characters; got {len(text):,}.",
            code="invalid_query",
            hint="Describe the topic in a sentence or a few keywords.",
        )
    return text


def _check_model(model: object) -> str:
    if model not in ResearchModel.values:
        raise ValidationError(
            f"Unknown model {str(model)[:40]!r}; allowed: snap, ponder.",
            code="invalid_model",
            hint="Send model snap (30 credits) or ponder (100 credits).",
        )
    return str(model)


def _check_budget(budget: object, *, model: str) -> int:
    price = research_price(model)
    if budget is None:
        return price
    if isinstance(budget, float) and budget.is_integer():
        budget = int(budget)
    if isinstance(budget, bool) or not isinstance(budget, int):
        raise ValidationError(
            f"budget_credits must be a whole number of credits; got {str(budget)[:30]!r}.",
            code="invalid_budget",
            hint=f"Send a whole number of at least {price}.",
        )
    if budget < price:
        raise ValidationError(
            f"budget_credits must be at least the {model} price, {price} credits; got {budget}.",
            code="invalid_budget",
            hint=f"Send budget_credits of {price} or more, or leave it out to spend {price}.",
        )
    return budget


def _check_sources(sources: object) -> list[str]:
    if sources is None:
        return list(DEFAULT_SOURCES)
    if not isinstance(sources, list | tuple) or not sources:
        raise ValidationError(
            "sources must be a non-empty list.", code="invalid_sources", hint='Send e.g. ["paper", "article"].'
        )
    if len(sources) > len(SOURCE_KINDS):
        raise ValidationError(
            f"sources lists at most {len(SOURCE_KINDS)} kinds ({', '.join(SOURCE_KINDS)}); got {len(sources):,}.",
            code="invalid_sources",
            hint='Name each kind you want once, e.g. ["paper", "article"].',
        )
    cleaned: list[str] = []
    for kind in sources:
        if kind not in SOURCE_KINDS:
            raise ValidationError(
                f"Unknown source kind {str(kind)[:30]!r} in sources; allowed: {', '.join(SOURCE_KINDS)}.",
                code="invalid_sources",
                hint='Send some of "paper", "article", "local".',
            )
        if kind in cleaned:
            raise ValidationError(f"sources names {kind!r} twice.", code="invalid_sources", hint="Name each kind once.")
        cleaned.append(str(kind))
    return cleaned


_NOT_A_HOST = re.compile(r"[/\\:?#@\s]")


def _check_domains(excluded_domains: object) -> list[str]:
    """excluded_domains as sent: a list of at most MAX_EXCLUDED_DOMAINS bare host names (IDNA-encodable; no
    scheme, path, port or spaces); search_options then normalises them. Raises ValidationError naming the entry."""
    if excluded_domains is None:
        return []
    if not isinstance(excluded_domains, list | tuple) or not all(isinstance(d, str) for d in excluded_domains):
        raise ValidationError(
            "excluded_domains must be a list of domain names.",
            code="invalid_excluded_domains",
            hint='Send e.g. ["example.com"].',
        )
    if len(excluded_domains) > MAX_EXCLUDED_DOMAINS:
        raise ValidationError(
            f"excluded_domains lists at most {MAX_EXCLUDED_DOMAINS} domains; got {len(excluded_domains):,}.",
            code="too_many_domains",
            hint="Exclude a parent domain to cover its subdomains (example.com excludes blog.example.com).",
        )
    for index, value in enumerate(excluded_domains):
        problem = ""
        if _NOT_A_HOST.search(value.strip()):
            problem = "a domain name has no scheme, path, port or spaces"
        else:
            try:
                normalize_domain(value)
            except ValidationError:
                problem = "not a valid host name"
        if problem:
            raise ValidationError(
                f"excluded_domains[{index}] {value[:100]!r} is not a domain name: {problem}.",
                code="invalid_domain",
                hint="Send bare host names like example.com (subdomains are excluded with them).",
            )
    return list(excluded_domains)


def _check_options(*, date_from: date | None, date_to: date | None, excluded_domains: object) -> SearchOptions:
    """The session's source options, validated and normalised by the sources' one rule (filters.search_options)."""
    domains = _check_domains(excluded_domains)
    return search_options(date_from=date_from, date_to=date_to, excluded_domains=domains)


def _check_watch(watch: object) -> str:
    if watch in (None, ""):
        return ""
    if watch not in WatchInterval.values:
        raise ValidationError(
            f"watch must be daily, weekly or null; got {str(watch)[:20]!r}.",
            code="invalid_watch",
            hint="Send watch daily or weekly to re-run the topic on a schedule.",
        )
    return str(watch)


def _target_graph(
    *, actor: User, graph_id: str | None, scope: Scope | None, default_scope: Scope
) -> tuple[Graph | None, Scope]:
    """The graph to write into (None: a new research graph) and the session's scope. Raises NotFound, ValidationError."""
    if not graph_id:
        return None, Scope(scope or default_scope)
    # Only the caller's own graphs are writable targets: a foreign or unknown id is the same 404.
    graph = Graph.objects.filter(id=str(graph_id)[:64], owner=actor).first()
    if graph is None or graph.is_world:
        raise NotFound(
            f"No graph with id {str(graph_id)[:80]!r} that you can write to.",
            code="graph_not_found",
            hint="List your graphs with GET /api/v1/graphs/, or leave graph_id out to create a research graph.",
        )
    if scope is not None and Scope(scope) != graph.scope:
        raise ValidationError(
            f"A {scope}-scope session cannot write to graph {graph.id}, which is {graph.scope}.",
            code="graph_scope_mismatch",
            hint=f"Send graph_scope {graph.scope}, or pick a {scope} graph.",
        )
    return graph, Scope(graph.scope)


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


@dataclass(frozen=True)
class _Request:
    """A create request, validated: what the session would be and hold."""

    topic: str
    model: str
    budget: int
    kinds: list[str]
    domains: list[str]
    interval: str
    graph: Graph | None  # None: a new research graph
    scope: Scope


def _validated(
    *,
    actor: User,
    query: object,
    budget_credits: object,
    graph_id: str | None,
    scope: Scope | None,
    default_scope: Scope,
    model: object,
    sources: object,
    date_from: date | None,
    date_to: date | None,
    excluded_domains: object,
    watch: object,
) -> _Request:
    """research_session_create's input checks (a quote makes the same). Raises ValidationError, NotFound."""
    topic = _check_query(query)
    checked_model = _check_model(model)
    budget = _check_budget(budget_credits, model=checked_model)
    kinds = _check_sources(sources)
    domains = list(
        _check_options(date_from=date_from, date_to=date_to, excluded_domains=excluded_domains).excluded_domains
    )
    interval = _check_watch(watch)
    graph, session_scope = _target_graph(actor=actor, graph_id=graph_id, scope=scope, default_scope=default_scope)
    return _Request(
        topic=topic,
        model=checked_model,
        budget=budget,
        kinds=kinds,
        domains=domains,
        interval=interval,
        graph=graph,
        scope=session_scope,
    )


def research_session_quote(
    *,
    actor: User,
    query: object,
    budget_credits: object = None,
    graph_id: str | None = None,
    scope: Scope | None = None,
    default_scope: Scope = Scope.PRIVATE,
    model: object = ResearchModel.SNAP,
    sources: object = None,
    date_from: date | None = None,
    date_to: date | None = None,
    excluded_domains: object = None,
    watch: object = None,
) -> Quote:
    """What research_session_create would decide about money, without holding or creating anything: the hold
    it would take (the budget, default the model's price) and whether this request may spend it (the API
    key's monthly cap, then the balance: the decision create takes); `refusal` is create's 403 or 402.
    Raises what create raises on bad input (ValidationError, NotFound)."""
    from billing.services import credits_quote_amount

    checked = _validated(
        actor=actor,
        query=query,
        budget_credits=budget_credits,
        graph_id=graph_id,
        scope=scope,
        default_scope=default_scope,
        model=model,
        sources=sources,
        date_from=date_from,
        date_to=date_to,
        excluded_domains=excluded_domains,
        watch=watch,
    )
    return credits_quote_amount(account=actor, cost=checked.budget)


def research_session_create(
    *,
    actor: User,
    query: object,
    budget_credits: object = None,
    graph_id: str | None = None,
    scope: Scope | None = None,
    default_scope: Scope = Scope.PRIVATE,
    model: object = ResearchModel.SNAP,
    sources: object = None,
    date_from: date | None = None,
    date_to: date | None = None,
    excluded_domains: object = None,
    watch: object = None,
    idempotency_key: str | None = None,
    watch_of: ResearchSession | None = None,
) -> ResearchSession:
    """Validate, hold the budget under `idempotency_key` (REST: the request's money key, so a replayed
    Idempotency-Key holds once; None: a fresh key, a watch run), create the session `pending` (and, without
    graph_id, its research graph), queue the pipeline on commit. The pipeline captures each step from the hold
    and releases the rest. Raises ValidationError (400), NotFound (404 graph), KeyCapReached (403: the API key's
    monthly cap), InsufficientCredits (402); on any error nothing is held or written (the hold is released)."""
    from billing.services import credits_hold, credits_quote_amount

    checked = _validated(
        actor=actor,
        query=query,
        budget_credits=budget_credits,
        graph_id=graph_id,
        scope=scope,
        default_scope=default_scope,
        model=model,
        sources=sources,
        date_from=date_from,
        date_to=date_to,
        excluded_domains=excluded_domains,
        watch=watch,
    )
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
                    "date_from": date_from.isoformat() if date_from else None,
                    "date_to": date_to.isoformat() if date_to else None,
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
        _release_quietly(credit_hold, reason="research session not created")
        if created_graph is not None:
            _drop_graph_quietly(actor=actor, graph=created_graph)
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


def _release_quietly(hold: Hold, *, reason: str) -> None:
    from billing.services import credits_release

    try:
        if Hold.objects.filter(pk=hold.pk).exists():
            credits_release(hold=hold, reason=reason)
    except Exception:  # the stale-hold sweep releases it later
        logger.exception("could not release hold %s", hold.pk)


def _drop_graph_quietly(*, actor: User, graph: Graph) -> None:
    from exograph.graphs.services import graph_delete

    try:
        graph_delete(actor=actor, graph_id=graph.id)
    except Exception:
        logger.exception("could not remove research graph %s", graph.id)


def _run_due(session_id: str) -> uuid.UUID:
    """Record the session's run as due (call it in the transaction that creates the session): if its message is
    never sent (the web or beat process died after the commit), the lease sweep starts it. Returns the token."""
    from exograph.core.leases import lease_due
    from research.services.pipeline import RESEARCH_LEASE  # pipeline imports this module

    return lease_due(kind=RESEARCH_LEASE, subject_id=session_id, step="plan")


def _queue(session_id: str, token: uuid.UUID | None = None) -> None:
    from exograph.celery import app as celery_app
    from exograph.core.leases import lease_queued
    from exograph.core.queues import Queue
    from research.services.pipeline import RESEARCH_LEASE

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
                _release_quietly(hold, reason=reason)
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
    _drop_graph_quietly(actor=session.owner, graph=graph)


def research_session_complete(*, session: ResearchSession, report: dict[str, Any], note: str = "") -> None:
    """Mark completed with the report and release the rest of the hold."""
    _close(
        session,
        status=ResearchStatus.COMPLETED,
        fields={"report": report, "note": note[:500], "step": "done", "percent": 100},
        reason=f"research {session.id} finished",
    )


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
