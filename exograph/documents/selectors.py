"""Permission-scoped reads of documents. A foreign or missing id is the same NotFound."""

from __future__ import annotations

import uuid

from django.db.models import QuerySet

from exograph.accounts.models import User
from exograph.core.errors import NotFound
from exograph.core.scope import Scope
from exograph.documents.models import Document


def _not_found(document_id: object) -> NotFound:
    return NotFound(
        f"No document with id {str(document_id)[:80]!r}.",
        code="document_not_found",
        hint="List your documents with GET /api/v1/documents/ (or the list_documents tool).",
    )


def document_get_for_user(*, user: User, document_id: object) -> Document:
    """One of user's live documents. Raises NotFound for missing, deleted and foreign ids alike."""
    try:
        key = uuid.UUID(str(document_id))
    except ValueError as exc:
        raise _not_found(document_id) from exc
    document = Document.objects.select_related("graph").filter(id=key, owner=user, deleted_at__isnull=True).first()
    if document is None:
        raise _not_found(document_id)
    return document


def document_list_for_user(*, user: User, scope: Scope | None = None) -> QuerySet[Document]:
    """user's live documents, newest first; only those in graphs of `scope` when given."""
    documents = Document.objects.select_related("graph").filter(owner=user, deleted_at__isnull=True)
    if scope is not None:
        documents = documents.filter(graph__scope=scope)
    return documents.order_by("-created", "-id")
