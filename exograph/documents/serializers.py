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


# --- Schema-only serializers (the OpenAPI description of the shapes above) -----------------------

from rest_framework import serializers  # noqa: E402


class DocumentFailureOutSerializer(serializers.Serializer):
    stage = serializers.CharField()
    reason = serializers.CharField()


class DocumentOutSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    filename = serializers.CharField()
    title = serializers.CharField()
    content_type = serializers.ChoiceField(choices=["pdf", "docx"])
    size = serializers.IntegerField()
    pages = serializers.IntegerField()
    pages_estimated = serializers.BooleanField(help_text="True when a DOCX has no page count and it was estimated.")
    scope = serializers.ChoiceField(choices=["world", "private"])
    graph_id = serializers.CharField()
    status = serializers.CharField(
        help_text="pending, processing, processed, failed or cancelled; 'unchanged' (upload only): "
        "the same file was already in this graph and nothing was charged."
    )
    stage = serializers.CharField()
    progress = serializers.IntegerField(help_text="Percent, 0-100.")
    failure = DocumentFailureOutSerializer(allow_null=True)
    chunk_count = serializers.IntegerField()
    entity_count = serializers.IntegerField()
    relation_count = serializers.IntegerField()
    created = serializers.DateTimeField()
    processed_at = serializers.DateTimeField(allow_null=True)


class DocumentUploadOutSerializer(DocumentOutSerializer):
    credits_charged = serializers.IntegerField()
    balance = serializers.IntegerField()


class DocumentListItemOutSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    filename = serializers.CharField()
    title = serializers.CharField()
    pages = serializers.IntegerField()
    created = serializers.DateTimeField()
    scope = serializers.ChoiceField(choices=["world", "private"])
    status = serializers.CharField()
    progress = serializers.IntegerField()
    graph_id = serializers.CharField()
