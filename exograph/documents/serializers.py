"""Output shapes of documents, shared by REST, live progress events and (through REST) MCP.

The serializers are the one definition of each shape: they render the responses and describe
them in the OpenAPI schema.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from exograph.documents.models import Document


class DocumentFailureOutSerializer(serializers.Serializer):
    stage = serializers.CharField()
    reason = serializers.CharField()


def _failure(document: Document) -> dict[str, str] | None:
    if not document.failure_reason:
        return None
    return {"stage": document.failure_stage, "reason": document.failure_reason}


class DocumentWarningOutSerializer(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()


class DocumentListItemOutSerializer(serializers.Serializer):
    """The list_documents shape: id, title/file name, pages, created, scope, status, graph id."""

    id = serializers.UUIDField()
    filename = serializers.CharField()
    title = serializers.SerializerMethodField(help_text="The text document's title, else the file name.")
    pages = serializers.IntegerField()
    created = serializers.DateTimeField()
    scope = serializers.ChoiceField(choices=["world", "private"], source="graph.scope")
    status = serializers.SerializerMethodField(
        help_text="pending, processing, processed, failed or cancelled; 'unchanged' (upload only): "
        "the same file was already in this graph and nothing was charged."
    )
    progress = serializers.IntegerField()
    graph_id = serializers.CharField()

    @extend_schema_field(OpenApiTypes.STR)
    def get_title(self, document: Document) -> str:
        return document.title or document.filename

    @extend_schema_field(OpenApiTypes.STR)
    def get_status(self, document: Document) -> str:
        return str(self.context.get("status") or document.status)


class DocumentOutSerializer(DocumentListItemOutSerializer):
    content_type = serializers.ChoiceField(choices=["pdf", "docx", "text", "markdown"])
    source_url = serializers.CharField(help_text="Where a text document was read from ('' if unknown).")
    source_type = serializers.CharField(help_text="upload, article, paper or local.")
    published = serializers.DateField(allow_null=True)
    size = serializers.IntegerField()
    pages_estimated = serializers.BooleanField(help_text="True when a DOCX has no page count and it was estimated.")
    text_engine = serializers.CharField(
        help_text="Which engines read the text: pypdf, pdfium (the second PDF engine, for files pypdf cannot "
        "decode or open), ocr (pages without a text layer), joined by '+' when pages differ (e.g. 'pypdf+ocr'); "
        "python-docx; text or markdown. Blank until the document is parsed."
    )
    ocr_pages = serializers.IntegerField(help_text="PDF pages read by OCR; priced like any other page.")
    stage = serializers.CharField()
    failure = serializers.SerializerMethodField()
    chunk_count = serializers.IntegerField()
    entity_count = serializers.IntegerField()
    relation_count = serializers.IntegerField()
    processed_at = serializers.DateTimeField(allow_null=True)
    credits_charged = serializers.IntegerField(
        help_text="What the upload charged (5 + 1 per page; a text note 5 + 1 per 3,000 characters), as the web viewer shows."
    )
    refunded = serializers.BooleanField(
        help_text="True when that charge came back (the document was cancelled, or failed and was refunded)."
    )
    warnings = DocumentWarningOutSerializer(
        many=True,
        help_text="How processing fell short without failing, e.g. llm_extractor_fallback: the LLM extractor "
        "refused some passages and the offline extractor was used for them.",
    )

    @extend_schema_field(DocumentFailureOutSerializer(allow_null=True))
    def get_failure(self, document: Document) -> dict[str, str] | None:
        return _failure(document)


class DocumentUploadOutSerializer(DocumentOutSerializer):
    credits_charged = serializers.IntegerField()
    balance = serializers.IntegerField()


class QuoteOutSerializer(serializers.Serializer):
    """The dry_run=true answer of a metered endpoint: nothing is charged or changed."""

    dry_run = serializers.BooleanField()
    credits_needed = serializers.IntegerField()
    balance = serializers.IntegerField()
    covered = serializers.BooleanField(
        help_text="Whether the real call may spend credits_needed now (the balance and the API key's monthly cap)."
    )
    refusal = serializers.DictField(
        required=False,
        help_text="When not covered: the error the real call would answer ({code, message, hint, ...}), e.g. "
        "insufficient_credits (402) or key_monthly_cap_reached (403).",
    )


class DocumentUploadQuoteOutSerializer(QuoteOutSerializer):
    filename = serializers.CharField()
    pages = serializers.IntegerField()
    pages_estimated = serializers.BooleanField()
    scope = serializers.ChoiceField(choices=["world", "private"])
    graph_id = serializers.CharField()
    duplicate_of = serializers.UUIDField(
        allow_null=True, help_text="The document this file already is in the graph (then nothing would be charged)."
    )


def document_out(document: Document, *, status: str | None = None) -> dict[str, Any]:
    """One document as the API returns it. `status` overrides the stored one (e.g. "unchanged")."""
    return dict(DocumentOutSerializer(document, context={"status": status}).data)


def document_list_item(document: Document) -> dict[str, Any]:
    return dict(DocumentListItemOutSerializer(document).data)


def document_progress(document: Document) -> dict[str, Any]:
    """The live-progress event of one document (a subset of document_out: no graph lookup)."""
    return {
        "id": str(document.id),
        "filename": document.filename,
        "status": document.status,
        "stage": document.stage,
        "progress": document.progress,
        "pages": document.pages,
        "failure": _failure(document),
        "warnings": list(document.warnings),
    }
