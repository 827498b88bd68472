"""Web chat: the sessions sidebar (new, rename, delete) and a session's page with its answers and citations.

Sending a message is the page's script (exograph/static/js/chat.js) calling the REST endpoint
POST /api/v1/chat/messages/ with the login session (CSRF) and an Idempotency-Key, so metering, refunds
and idempotency are the API's; the answer streams in over the events socket (exograph.chat.events).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from billing.prices import chat_action, price_for
from billing.services import credit_balance
from exograph.accounts.models import User
from exograph.chat.citations import CITATION_MARKER, citation_numbers
from exograph.chat.models import ChatEngine, ChatMessage, ChatModel, ChatRole, ChatSession
from exograph.chat.selectors import chat_message_list, chat_session_get_for_user, chat_session_list_for_user
from exograph.chat.services import chat_session_delete, chat_session_rename
from exograph.core.errors import ExoGraphError, NotFound
from exograph.core.scope import Scope
from exograph.documents.selectors import document_view_url
from exograph.graphs.selectors import graph_list_for_user

SESSIONS_PER_PAGE = 30


class RenameForm(forms.Form):
    title = forms.CharField(max_length=200)


def _user(request: HttpRequest) -> User:
    user = request.user
    assert isinstance(user, User)  # noqa: S101 (login_required guarantees it)
    return user


def answer_segments(text: str, *, known: set[int]) -> list[dict[str, Any]]:
    """The answer as text runs and citation markers (numbers with evidence become links). Pure."""
    segments: list[dict[str, Any]] = []
    position = 0
    for match in CITATION_MARKER.finditer(text):
        if match.start() > position:
            segments.append({"text": text[position : match.start()]})
        numbers = [n for n in citation_numbers(match.group(1)) if n in known]
        segments.append({"cite": numbers} if numbers else {"text": match.group(0)})
        position = match.end()
    if position < len(text):
        segments.append({"text": text[position:]})
    return segments


def _safe_url(url: object) -> str | None:
    value = str(url or "")
    return value if urlsplit(value).scheme in ("http", "https") else None


def evidence_view(item: dict[str, Any]) -> dict[str, Any]:
    """One cited evidence item for the page: where it came from and where to open it."""
    origin = str(item.get("origin") or "")
    link = None
    label = str(item.get("source") or "")
    if origin == "web":
        link = _safe_url(item.get("url"))
        label = label or str(item.get("url") or "web page")
    elif item.get("view_url"):
        link = str(item["view_url"])
    elif origin == "private" and item.get("document_id"):  # answers stored before evidence carried view_url
        link = document_view_url(item["document_id"], page=item.get("page"), chunk_id=item.get("chunk_id"))
    if item.get("page"):
        label = f"{label}, page {item['page']}" if label else f"page {item['page']}"
    return {
        "n": item.get("n"),
        "origin": origin,
        "kind": str(item.get("kind") or ""),
        "text": str(item.get("text") or ""),
        "label": label,
        "link": link,
        "external": origin == "web",
    }


def message_view(message: ChatMessage) -> dict[str, Any]:
    if message.role != ChatRole.ASSISTANT:
        return {"id": str(message.id), "role": str(message.role), "content": message.content}
    citations = message.citations or {}
    cited = [int(n) for n in citations.get("cited") or []]
    evidence = [evidence_view(item) for item in message.evidence or [] if item.get("n") in cited]
    usage = message.usage or {}
    return {
        "id": str(message.id),
        "role": str(message.role),
        "content": message.content,
        "segments": answer_segments(message.content, known={e["n"] for e in evidence}),
        "evidence": evidence,
        "grounded": bool(citations.get("grounded")),
        "support_percent": round(float(citations.get("support_score") or 0.0) * 100),
        "model": message.model_name,
        "engine": message.reasoning_engine,
        "credits": usage.get("credits"),
        "refunded": bool(usage.get("credits_refunded")),
    }


def _page_context(request: HttpRequest, *, user: User, session: ChatSession | None) -> dict[str, Any]:
    sessions = Paginator(chat_session_list_for_user(user=user), SESSIONS_PER_PAGE).get_page(request.GET.get("page"))
    return {
        "sessions": sessions,
        "session": session,
        "messages_view": [message_view(m) for m in chat_message_list(session=session)] if session else [],
        "graphs": graph_list_for_user(user=user, scope=None),
        "models": [
            {"value": value, "label": label, "credits": price_for(chat_action(value))}
            for value, label in ChatModel.choices
        ],
        "engines": ChatEngine.choices,
        "web_configured": bool(settings.WEB_SEARCH_URL),
        "scopes": Scope.choices,
        "current": {
            "model": session.model_name if session else ChatModel.SNAP,
            "engine": session.reasoning_engine if session else ChatEngine.GRAPH,
            "scope": session.graph_scope if session else Scope.PRIVATE,
            "graph_id": session.graph_id if session else "",
        },
        "balance": credit_balance(account=user),
        "max_chars": settings.CHAT_MESSAGE_MAX_CHARS,
    }


@login_required
def chat_page(request: HttpRequest, session_id: str | None = None) -> HttpResponse:
    """The chat page: a session (with its messages) or, without one, a composer that starts a session."""
    user = _user(request)
    session = None
    if session_id is not None:
        try:
            session = chat_session_get_for_user(user=user, session_id=session_id)
        except NotFound as exc:
            return render(request, "404.html", {"message": exc.message}, status=404)
    return render(request, "chat/chat.html", _page_context(request, user=user, session=session))


@login_required
@require_POST
def chat_session_rename_view(request: HttpRequest, session_id: str) -> HttpResponse:
    form = RenameForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Give the session a title of at most 200 characters.")
        return redirect("chat:session", session_id=session_id)
    try:
        session = chat_session_rename(actor=_user(request), session_id=session_id, title=form.cleaned_data["title"])
    except NotFound as exc:
        return render(request, "404.html", {"message": exc.message}, status=404)
    except ExoGraphError as exc:
        messages.error(request, exc.message)
        return redirect("chat:session", session_id=session_id)
    messages.success(request, f"Renamed to {session.title!r}.")
    return redirect("chat:session", session_id=session.id)


@login_required
@require_POST
def chat_session_delete_view(request: HttpRequest, session_id: str) -> HttpResponse:
    try:
        chat_session_delete(actor=_user(request), session_id=session_id)
    except NotFound as exc:
        return render(request, "404.html", {"message": exc.message}, status=404)
    messages.success(request, "Chat session deleted.")
    return redirect("chat:page")
