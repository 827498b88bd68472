"""Research reads, scoped by owner: a foreign id is the same 404 as a missing one."""

from __future__ import annotations

import uuid

from django.db.models import Q, QuerySet

from exograph.accounts.models import User
from exograph.core.errors import NotFound
from exograph.core.scope import Scope
from research.models import ResearchSession, ResearchSource


def research_session_get_for_user(*, user: User, session_id: object) -> ResearchSession:
    """One of user's sessions. Raises NotFound (missing, malformed or another account's)."""
    try:
        pk = uuid.UUID(str(session_id))
    except ValueError:
        pk = None
    session = ResearchSession.objects.filter(pk=pk, owner=user).first() if pk else None
    if session is None:
        raise NotFound(
            f"No research session with id {str(session_id)[:80]!r}.",
            code="research_not_found",
            hint="List your sessions with GET /api/v1/research/ (or the list_research_sessions tool).",
        )
    return session


def research_session_list_for_user(*, user: User, scope: Scope | None) -> QuerySet[ResearchSession]:
    """user's sessions, newest first; scope filters (None: all)."""
    sessions = ResearchSession.objects.filter(owner=user)
    if scope is not None:
        sessions = sessions.filter(scope=scope)
    return sessions.order_by("-created", "-id")


def research_sources_of(*, session: ResearchSession) -> list[ResearchSource]:
    return list(ResearchSource.objects.filter(session=session).order_by("number"))


def research_keys_read(*, session: ResearchSession) -> set[str]:
    """Every source key the session's watch topic (all its runs) has read: a watch run reads only new ones."""
    root = session.watch_root_id
    # One filter, not a .union(): SQLite refuses the union of two querysets ordered by Meta.ordering.
    return set(
        ResearchSource.objects.filter(Q(session_id=root) | Q(session__watch_of_id=root))
        .order_by()
        .values_list("key", flat=True)
    )
