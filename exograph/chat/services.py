"""Chat writes: sessions (create, rename, delete) and sending a message (retrieve, generate, check, store).

The paid use case is exograph.chat.metered.chat_message_send_metered: it charges before `chat_message_send`
runs and refunds when it raises. `chat_message_prepare` validates everything first, so bad input costs nothing.
A process that dies between the charge and the stored answer cannot refund: the charge and the generation
run under a `chat.generation` lease (`chat_generation_lease`, exograph/core/leases.py) that the stored
answer deletes in its own transaction; a lease left behind expires and the periodic sweep refunds the charge.
The generation step itself (providers, prompts, the extractive reader) is exograph/chat/generation.py.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction

from billing.prices import chat_action
from billing.services import credit_balance, credits_refund, earnings_record
from exograph.accounts.models import User
from exograph.chat.citations import CitationRenumbering, citations_check
from exograph.chat.events import ChatStream
from exograph.chat.evidence import ENGINES, EvidenceSet, evidence_retrieve
from exograph.chat.followup import EARLIER_TURNS_MAX, follow_up_context
from exograph.chat.generation import TokenSink, _generate
from exograph.chat.models import ChatMessage, ChatRole, ChatSession
from exograph.chat.numbering import numbers_release, numbers_reserve, prior_cited, prior_numbers, renumber
from exograph.chat.selectors import chat_message_list, chat_session_get_for_user
from exograph.chat.tokens import token_count
from exograph.core.errors import ExoGraphError, NotFound, ValidationError
from exograph.core.leases import HeldLease, LeaseKind, lease_hold, lease_kind_register, lease_release
from exograph.core.llm.providers import MODELS, context_tokens_for
from exograph.core.models import Lease
from exograph.core.scope import Scope
from exograph.graphs.selectors import graph_get_for_user

logger = logging.getLogger(__name__)

TITLE_CHARS = 80
# The relevance (0..1, extractive.relevance_of) at which an answer's support is not discounted.
SUPPORT_FULL = 0.6


def _check_choice(value: str, *, name: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValidationError(
            f"Unknown {name} {str(value)[:40]!r}; allowed: {', '.join(allowed)}.",
            code=f"invalid_{name}",
            hint=f"Send {name} as one of: {', '.join(allowed)}.",
        )
    return value


def _check_engine_available(engine: str) -> None:
    if engine == "web" and not settings.WEB_SEARCH_URL:
        raise ValidationError(
            "Engine web needs a web search API, and none is configured.",
            code="web_search_not_configured",
            hint="Set WEB_SEARCH_URL (and WEB_SEARCH_API_KEY) to a Brave Search or SearXNG endpoint, "
            "or use engine rag or graph.",
        )


def _check_message(message: str) -> str:
    text = (message or "").strip()
    if not text:
        raise ValidationError("The message is empty.", code="invalid_message", hint="Send a non-empty message.")
    limit = settings.CHAT_MESSAGE_MAX_CHARS
    if len(text) > limit:
        raise ValidationError(
            f"The message has {len(text)} characters; the limit is {limit}.",
            code="message_too_long",
            hint=f"Shorten the message to at most {limit} characters.",
        )
    return text


def title_from(message: str) -> str:
    """A session title from its first message: the first line, at most TITLE_CHARS characters."""
    first = " ".join(message.split())
    if len(first) <= TITLE_CHARS:
        return first
    return first[: TITLE_CHARS - 1].rsplit(" ", 1)[0] + "…"


def _named_graph_scope(*, actor: User, graph_id: str, scope_argument: Scope | str | None) -> Scope:
    """The scope of a graph a session or message names: its own. A graph_scope argument of the other scope is a 400
    graph_scope_mismatch (as research and uploads), never a world-labelled session reading a private graph.
    Raises NotFound (graph), ValidationError."""
    graph = graph_get_for_user(user=actor, graph_id=graph_id)
    if scope_argument and Scope(scope_argument) != graph.scope:
        raise ValidationError(
            f"graph_scope is {scope_argument} but graph {graph.id} is {graph.scope}.",
            code="graph_scope_mismatch",
            hint=f"Send graph_scope {graph.scope} (or leave it out), or pick a {scope_argument} graph.",
        )
    return Scope(graph.scope)


def chat_session_create(
    *,
    actor: User,
    title: str = "",
    model_name: str = "snap",
    reasoning_engine: str = "rag",
    graph_scope: Scope = Scope.PRIVATE,
    graph_id: str = "",
    scope_argument: Scope | None = None,
) -> ChatSession:
    """Create a session. A named graph gives its scope (scope_argument, the graph_scope the caller sent, of the
    other scope is graph_scope_mismatch). Raises ValidationError (model, engine, web unconfigured, scope mismatch),
    NotFound (graph_id)."""
    _check_choice(model_name, name="model", allowed=MODELS)
    _check_choice(reasoning_engine, name="reasoning_engine", allowed=ENGINES)
    _check_engine_available(reasoning_engine)
    if graph_id:
        graph_scope = _named_graph_scope(actor=actor, graph_id=graph_id, scope_argument=scope_argument)
    return ChatSession.objects.create(
        owner=actor,
        title=" ".join((title or "").split())[:200],
        model_name=model_name,
        reasoning_engine=reasoning_engine,
        graph_scope=Scope(graph_scope),
        graph_id=graph_id or "",
    )


def chat_session_rename(*, actor: User, session_id: object, title: str) -> ChatSession:
    """Rename one of actor's sessions. Raises NotFound, ValidationError (empty title)."""
    session = chat_session_get_for_user(user=actor, session_id=session_id)
    clean = " ".join((title or "").split())[:200]
    if not clean:
        raise ValidationError("The title is empty.", code="invalid_title", hint="Send a non-empty title.")
    session.title = clean
    session.save(update_fields=["title", "modified"])
    return session


def chat_session_delete(*, actor: User, session_id: object) -> None:
    """Delete one of actor's sessions and its messages. Raises NotFound."""
    chat_session_get_for_user(user=actor, session_id=session_id).delete()


@dataclass(frozen=True)
class ChatPlan:
    """A validated send_chat_message: nothing is written or charged yet."""

    message: str
    session: ChatSession | None
    model: str
    engine: str
    scope: Scope
    graph_id: str
    earlier: str = ""  # the session's earlier question(s) a follow-up is read with (exograph/chat/followup.py)

    @property
    def action(self) -> str:
        """The price-table key charged: ponder is charged as snap on the offline reader (billing.prices.chat_action)."""
        return chat_action(self.model)

    @property
    def asked(self) -> str:
        """What retrieval and the offline reader read: the message, after the earlier question it follows up."""
        return f"{self.earlier} {self.message}" if self.earlier else self.message


def chat_message_prepare(
    *,
    actor: User,
    message: str,
    session_id: object = None,
    model: str | None = None,
    engine: str | None = None,
    scope: Scope | None = None,
    default_scope: Scope = Scope.PRIVATE,
    graph_id: str | None = None,
) -> ChatPlan:
    """Validate a message before any charge. A session's model/engine/scope/graph apply unless given
    (a new session takes default_scope, the request's header scope).
    Raises ValidationError (message, model, engine), NotFound (session or graph). No writes."""
    text = _check_message(message)
    session = chat_session_get_for_user(user=actor, session_id=session_id) if session_id else None
    chosen_model = model or (session.model_name if session else "snap")
    chosen_engine = engine or (session.reasoning_engine if session else "graph")
    _check_choice(chosen_model, name="model", allowed=MODELS)
    _check_choice(chosen_engine, name="reasoning_engine", allowed=ENGINES)
    _check_engine_available(chosen_engine)
    chosen_graph = graph_id if graph_id is not None else (session.graph_id if session else "")
    chosen_scope = Scope(scope) if scope else (Scope(session.graph_scope) if session else Scope(default_scope))
    if chosen_graph:
        graph_scope = _named_graph_scope(actor=actor, graph_id=chosen_graph, scope_argument=scope)
        chosen_scope = chosen_scope if session is not None and not graph_id else graph_scope
    earlier: list[str] = []  # the session's newest user turns, oldest first: all a follow-up can lean on
    if session is not None:
        newest = chat_message_list(session=session).filter(role=ChatRole.USER).reverse()[:EARLIER_TURNS_MAX]
        earlier = list(newest.values_list("content", flat=True))[::-1]
    return ChatPlan(
        message=text,
        session=session,
        model=chosen_model,
        engine=chosen_engine,
        scope=chosen_scope,
        graph_id=chosen_graph or "",
        earlier=follow_up_context(text, earlier),
    )


def _evidence_for(*, actor: User, plan: ChatPlan) -> EvidenceSet:
    if plan.engine == "web":
        from exograph.sources.web import web_evidence

        return EvidenceSet(items=web_evidence(question=plan.asked), contributor_ids=[])
    return evidence_retrieve(
        actor=actor, question=plan.asked, engine=plan.engine, scope=plan.scope, graph_id=plan.graph_id or None
    )


def _history(*, session: ChatSession | None, budget: int) -> list[dict[str, str]]:
    """The newest prior turns whose tokens fit the budget, oldest first (user/assistant alternating)."""
    if session is None or budget <= 0:
        return []
    turns: list[dict[str, str]] = []
    used = 0
    for message in reversed(list(chat_message_list(session=session))):
        cost = token_count(message.content)
        if used + cost > budget:
            break
        used += cost
        turns.append({"role": str(message.role), "content": message.content})
    turns.reverse()
    while turns and turns[0]["role"] != "user":
        turns.pop(0)
    return turns


def _renumber(answer: str, items: list[dict[str, Any]], start: int) -> tuple[str, list[dict[str, Any]]]:
    """This turn's items renumbered from start in order of first citation (exograph/chat/numbering.py)."""
    text, renumbered, _used = renumber(answer, items, start)
    return text, renumbered


def chat_message_send(
    *,
    actor: User,
    plan: ChatPlan,
    credits_charged: int = 0,
    on_token: TokenSink | None = None,
    lease: HeldLease | None = None,
    charge_key: str = "",
) -> dict[str, Any]:
    """Retrieve evidence, generate, check citations, then store the turn (a new session when plan has
    none) and record world contributors' earnings. Writes only after generation succeeds. Streams the
    turn live to actor's events socket (exograph.chat.events: status, tokens, then chat.done after
    commit, or chat.error) and to `on_token`. Raises ServiceUnavailable (graph store, web search), LLM
    errors (provider down 503, timeout 504). `lease` (from chat_generation_lease) is released in the
    transaction that stores the answer: answered and paid, or left for the sweep to refund. An answer the
    evidence does not hold (`answered` False) refunds the charge `charge_key` in that same transaction.
    The result's `evidence` is what the answer cites; `considered` is every item handed to the model, each
    flagged `cited`, numbered from the turn's first number in order of first citation."""
    # Ids are fixed up front so every live event of this turn names the session and message it becomes.
    session_id = plan.session.id if plan.session is not None else uuid.uuid4()
    message_id = uuid.uuid4()
    stream = ChatStream(user_id=int(actor.pk), session_id=str(session_id), message_id=str(message_id))

    def sink(piece: str) -> None:
        stream.token(piece)
        if on_token is not None:
            on_token(piece)

    try:
        return _send(
            actor=actor,
            plan=plan,
            credits_charged=credits_charged,
            session_id=session_id,
            message_id=message_id,
            stream=stream,
            sink=sink,
            lease=lease,
            charge_key=charge_key,
        )
    except ExoGraphError as exc:
        stream.error(code=exc.code, message=exc.message)
        raise
    except Exception:
        stream.error(code="internal_error", message="The answer failed.")
        raise


def _send(
    *,
    actor: User,
    plan: ChatPlan,
    credits_charged: int,
    session_id: uuid.UUID,
    message_id: uuid.UUID,
    stream: ChatStream,
    sink: TokenSink,
    lease: HeldLease | None,
    charge_key: str = "",
) -> dict[str, Any]:
    stream.status("retrieving")
    found = _evidence_for(actor=actor, plan=plan)
    prior = prior_cited(plan.session)
    start = numbers_reserve(plan.session, len(found.items))
    items = [{"n": start + i, **item} for i, item in enumerate(found.items)]
    fixed = prior_numbers(items, prior)  # a passage an earlier turn cited keeps its number
    history = _history(session=plan.session, budget=min(settings.CHAT_HISTORY_TOKENS, context_tokens_for(plan.model)))
    stream.status("generating")
    # The text streams with the numbers the stored answer gets (1..n in order of first citation), not the
    # retrieval's: a client never sees [3] streamed and [2] in chat.done for the same item.
    streamed = CitationRenumbering(own=(int(item["n"]) for item in items), start=start, fixed=fixed)

    def renumbered(piece: str) -> None:
        if out := streamed.feed(piece):
            sink(out)

    generated = _generate(plan=plan, items=items, history=history, on_token=renumbered, stream=stream)
    if tail := streamed.finish():
        sink(tail)
    stream.flush()
    text, items, used = renumber(generated["text"], items, start, fixed)
    known = {**prior, **{item["n"]: item for item in items}}
    check = citations_check(answer=text, evidence={n: str(item["text"]) for n, item in known.items()})
    # Grounded means the cited evidence answers the question, not only that the words were copied from it:
    # an answer the evidence does not cover (relevance below RELEVANCE_MIN) is not grounded and scores 0.
    answered = bool(generated["answered"])
    check.grounded = check.grounded and answered
    # ... and the support is how sure the extractive reader is of its short answer (its lead over the next candidate,
    # whether the evidence says it is of the asked kind, whether it took two links: calibrated on HotpotQA dev, see
    # core/llm/extractive.py TYPE_SURENESS); a model's reply is discounted by how well the evidence covers the question.
    if "confidence" in generated:
        sureness = float(generated["confidence"])
    else:
        sureness = min(1.0, float(generated["relevance"]) / SUPPORT_FULL)
    check.support_score = round(check.support_score * sureness, 3)
    if not answered:
        check.support_score = 0.0
    refunded = 0
    if not answered and credits_charged and charge_key:
        refunded = credits_charged  # an answer the documents don't hold is not charged (README "Chat")
    usage = {
        "credits": credits_charged - refunded,
        "credits_refunded": refunded,
        "provider": generated["provider"],
        "model": plan.model,
        "provider_model": generated["model"],
        "input_tokens": generated["input_tokens"],
        "output_tokens": generated["output_tokens"],
    }
    cited_numbers = set(check.cited)
    cited = [{**known[n], "cited": True} for n in check.cited if n in known]
    considered = [{**item, "cited": item["n"] in cited_numbers} for item in items]
    with transaction.atomic():
        session = plan.session
        if session is None:
            session = ChatSession.objects.create(
                id=session_id,
                owner=actor,
                title=title_from(plan.message),
                model_name=plan.model,
                reasoning_engine=plan.engine,
                graph_scope=plan.scope,
                graph_id=plan.graph_id,
                next_evidence_number=start + used,
            )
        else:
            numbers_release(session, start=start, reserved=len(items), used=used)
            if not session.title:
                session.title = title_from(plan.message)
        ChatMessage.objects.create(session=session, role=ChatRole.USER, content=plan.message)
        answer = ChatMessage.objects.create(
            id=message_id,
            session=session,
            role=ChatRole.ASSISTANT,
            content=check.answer,
            model_name=plan.model,
            reasoning_engine=plan.engine,
            evidence=items,
            citations=check.as_dict(),
            usage=usage,
        )
        session.save(update_fields=["title", "modified"])
        if refunded:
            credits_refund(account=actor, charge_key=charge_key, reason="the documents do not answer the question")
        if found.contributor_ids:
            earnings_record(querier=actor, query=plan.message, contributor_ids=found.contributor_ids, source="chat")
        result: dict[str, Any] = {
            "session_id": str(session.id),
            "message_id": str(answer.id),
            "title": session.title,
            "answer": check.answer,
            "model": plan.model,
            "reasoning_engine": plan.engine,
            "graph_scope": str(plan.scope),
            "graph_id": plan.graph_id or None,
            "evidence": cited,
            "considered": considered,
            "answered": answered,
            "short_answer": generated["short_answer"],
            "grounded": check.grounded,
            "support_score": check.support_score,
            "citations": check.as_dict(),
            "usage": usage,
        }
        stream.done_on_commit({**result, "balance": credit_balance(account=actor)})
        if lease is not None:
            lease_release(lease)  # with the answer: the charge now has what it paid for
    logger.info(
        "chat message session=%s message=%s engine=%s model=%s evidence=%d grounded=%s",
        session.id,
        answer.id,
        plan.engine,
        plan.model,
        len(items),
        check.grounded,
    )
    return result


# --- interrupted generations (the chat lease) --------------------------------------------------------

CHAT_LEASE = "chat.generation"
_LEASE_STEP = "generate:"


@contextmanager
def chat_generation_lease(*, account: User, charge_key: str) -> Iterator[HeldLease]:
    """Hold a lease over one message's charge and generation (take the charge inside the block, pass the
    lease to chat_message_send). If the process dies first, the sweep refunds the charge with that key."""
    subject_id = f"{account.pk}:{uuid.uuid4().hex}"
    with lease_hold(kind=CHAT_LEASE, subject_id=subject_id, step=f"{_LEASE_STEP}{charge_key}") as held:
        yield held


def _lease_active(subject_id: str) -> bool:
    return True  # a stored answer deletes its lease in the same transaction: any lease left is unanswered


def _lease_refund(lease: Lease, reason: str) -> None:
    """Refund the charge of a generation whose process died before the answer was stored (once)."""
    account = User.objects.filter(pk=lease.subject_id.partition(":")[0]).first()
    charge_key = lease.step.removeprefix(_LEASE_STEP)
    if account is None or not charge_key:
        return
    try:
        credits_refund(account=account, charge_key=charge_key, reason="the answer was interrupted")
    except NotFound:
        return  # it died before charging: nothing to give back
    logger.warning("chat generation of account %s interrupted; charge refunded", account.pk)


def _lease_resume(lease: Lease) -> None:
    _lease_refund(lease, "")  # the client that asked is gone: a generation is never resumed, only refunded


# The client waits on its request: nothing to resume, so the first expiry refunds (max_recoveries=0).
lease_kind_register(
    LeaseKind(name=CHAT_LEASE, active=_lease_active, resume=_lease_resume, give_up=_lease_refund, max_recoveries=0)
)
