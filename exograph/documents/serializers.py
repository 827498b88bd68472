"""Output shapes of documents, shared by REST and (through REST) MCP."""

from __future__ import annotations

from typing import Any

from exograph.documents.models import Document


def document_out(document: Document, *, status: str | None = None) -> dict[str, Any]:
    """One document as the API returns it. `status` overrides the stored one (e.g. "unchanged")."""
    return {
        "id": str(document.id),
        "filename": document.filename,
        "title": document.filename,
        "content_type": document.content_type,
        "size": document.size,
        "pages": document.pages,
        "pages_estimated": document.pages_estimated,
        "scope": document.graph.scope,
        "graph_id": document.graph_id,
        "status": status or document.status,
        "stage": document.stage,
        "progress": document.progress,
        "failure": {"stage": document.failure_stage, "reason": document.failure_reason}
        if document.failure_reason
        else None,
        "chunk_count": document.chunk_count,
        "entity_count": document.entity_count,
        "relation_count": document.relation_count,
        "created": document.created.isoformat(),
        "processed_at": document.processed_at.isoformat() if document.processed_at else None,
    }


def document_list_item(document: Document) -> dict[str, Any]:
    """The list_documents shape: id, title/file name, pages, created, scope, status, graph id."""
    return {
        "id": str(document.id),
        "filename": document.filename,
        "title": document.filename,
        "pages": document.pages,
        "created": document.created.isoformat(),
        "scope": document.graph.scope,
        "status": document.status,
        "progress": document.progress,
        "graph_id": document.graph_id,
    }
