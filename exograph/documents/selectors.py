"""Permission-scoped reads of documents. A foreign or missing id is the same NotFound."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlencode

from django.db.models import QuerySet
from django.urls import reverse

from exograph.accounts.models import User
from exograph.core.errors import NotFound
from exograph.core.scope import Scope
from exograph.documents.models import Document, DocumentOriginal


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


def document_original_get_for_user(*, user: User, document_id: object) -> tuple[Document, bytes]:
    """One of user's live PDFs and its original bytes (kept once processed, for the viewer). Raises NotFound for
    missing, deleted and foreign ids alike, and for a document whose original is not kept."""
    document = document_get_for_user(user=user, document_id=document_id)
    data = DocumentOriginal.objects.filter(document=document).values_list("data", flat=True).first()
    if data is None:
        raise NotFound(
            "This document's original file is not kept.",
            code="document_original_not_kept",
            hint="Only PDFs processed since the viewer shows pages keep their file; its text is on its page.",
        )
    return document, bytes(data)


def document_has_original(*, document: Document) -> bool:
    return DocumentOriginal.objects.filter(document=document).exists()


def document_list_for_user(*, user: User, scope: Scope | None = None) -> QuerySet[Document]:
    """user's live documents, newest first; only those in graphs of `scope` when given."""
    documents = Document.objects.select_related("graph").filter(owner=user, deleted_at__isnull=True)
    if scope is not None:
        documents = documents.filter(graph__scope=scope)
    return documents.order_by("-created", "-id")


def document_view_url(document_id: object, *, page: int | None = None, chunk_id: str | None = None) -> str:
    """The document viewer's address, opened at `page` with passage `chunk_id` highlighted. Pure."""
    query = {key: value for key, value in (("page", page), ("chunk", chunk_id)) if value}
    url = reverse("documents:view", args=[str(document_id)])
    return f"{url}?{urlencode(query)}" if query else url


def documents_viewable(*, user: User, document_ids: Iterable[object]) -> set[str]:
    """The ids among `document_ids` of user's live documents: the ones the viewer opens for user."""
    keys = set()
    for document_id in document_ids:
        try:
            keys.add(uuid.UUID(str(document_id)))
        except ValueError:
            continue
    if not keys:
        return set()
    found = Document.objects.filter(id__in=keys, owner=user, deleted_at__isnull=True).values_list("id", flat=True)
    return {str(key) for key in found}


def evidence_view_urls(*, user: User, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`items` (evidence dicts with document_id, page, chunk_id) each with `view_url`: the viewer at the passage
    when it comes from one of user's documents, else None (world passages of other accounts, web pages)."""
    viewable = documents_viewable(user=user, document_ids={i.get("document_id") for i in items if i.get("chunk_id")})
    return [
        {
            **item,
            "view_url": document_view_url(item["document_id"], page=item.get("page"), chunk_id=item["chunk_id"])
            if item.get("chunk_id") and str(item.get("document_id")) in viewable
            else None,
        }
        for item in items
    ]
