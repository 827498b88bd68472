"""Research reads, scoped by owner: a foreign id is the same 404 as a missing one."""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from django.db.models import Q, QuerySet

from exograph.accounts.models import User
from exograph.core.errors import NotFound
from exograph.core.scope import Scope
from research.models import ResearchSession, ResearchSource
from research.sources import KEY_PREFIX, document_uuids, local_key


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


def research_copies(*, keys: Iterable[str], graph_id: str | None) -> set[str]:
    """Of the `local` source keys found, those naming a document research copied from another source, which is not
    a source again: any copy in graph_id (the session's target graph: its original was read, e.g. by an earlier
    run of a watch topic), and a copy in a private graph of a platform document that still exists (the original
    is found by the same search; one document is one source, and a World Graph original pays its contributor).
    A document a graph holds of its own (an upload, cited where it is) is no copy."""
    ids = document_uuids(keys)
    if not ids:
        return set()
    rows = (
        ResearchSource.objects.filter(document_id__in=ids)
        .order_by()
        .values_list("key", "document_id", "document__graph_id", "document__graph__scope")
    )
    copies: set[str] = set()
    originals: dict[str, str] = {}
    for key, document_id, document_graph, scope in rows:
        own = local_key(document_id)
        if key == own:
            continue  # cited where it is: the graph's own document
        if graph_id and document_graph == graph_id:
            copies.add(own)
        elif scope == Scope.PRIVATE and key.startswith(KEY_PREFIX):
            originals[own] = key.removeprefix(KEY_PREFIX)
    living = _living_documents(originals.values())
    return copies | {copy for copy, original in originals.items() if original in living}


def _living_documents(document_ids: Iterable[str]) -> set[str]:
    from exograph.documents.models import Document

    found = Document.objects.filter(id__in=document_uuids(document_ids), deleted_at__isnull=True).values_list(
        "id", flat=True
    )
    return {str(pk) for pk in found}
