"""Permission-scoped reads of chat sessions. A foreign or missing id is the same NotFound."""

from __future__ import annotations

import uuid

from django.db.models import QuerySet

from exograph.accounts.models import User
from exograph.chat.models import ChatMessage, ChatSession
from exograph.core.errors import NotFound
from exograph.core.scope import Scope


def _not_found(session_id: object) -> NotFound:
    return NotFound(
        f"No chat session with id {str(session_id)[:80]!r}.",
        code="chat_session_not_found",
        hint="List your sessions with GET /api/v1/chat/sessions/ (or the list_chat_sessions tool).",
    )


def chat_session_get_for_user(*, user: User, session_id: object) -> ChatSession:
    """One of user's chat sessions. Raises NotFound for missing and foreign ids alike."""
    try:
        key = uuid.UUID(str(session_id))
    except ValueError as exc:
        raise _not_found(session_id) from exc
    session = ChatSession.objects.filter(id=key, owner=user).first()
    if session is None:
        raise _not_found(session_id)
    return session


def chat_session_list_for_user(*, user: User, scope: Scope | None = None) -> QuerySet[ChatSession]:
    """user's chat sessions, most recently updated first; only those of `scope` when given."""
    sessions = ChatSession.objects.filter(owner=user)
    if scope is not None:
        sessions = sessions.filter(graph_scope=scope)
    return sessions.order_by("-modified", "-id")


def chat_message_list(*, session: ChatSession) -> QuerySet[ChatMessage]:
    """A session's messages, oldest first (the caller has checked ownership)."""
    return session.messages.order_by("created", "id")
