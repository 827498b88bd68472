"""Text ingest: a plain-text or Markdown body (REST JSON {"text", "title"} or research) as a document."""

from __future__ import annotations

from datetime import date

from exograph.accounts.models import User
from exograph.core.errors import ValidationError
from exograph.core.scope import Scope
from exograph.documents.models import Document, DocumentType, SourceType
from exograph.documents.services.upload import (
    HoldPayment,
    PreparedUpload,
    document_create,
    document_upload_prepare,
)
from exograph.documents.validation import UploadedFile, text_filename, title_clean, upload_validate
from exograph.graphs.models import Graph

TEXT_SOURCE_TYPES = (SourceType.ARTICLE, SourceType.PAPER, SourceType.LOCAL)


def text_upload_build(*, text: object, title: object, source_url: object = None, markdown: bool = True) -> UploadedFile:
    """Validate a text body and its provenance into an upload (a .md or .txt named after the title), the same
    checks a .txt/.md file gets. Raises ValidationError (400: no title, empty text, bad URL) or 413 (too long)."""
    if not isinstance(text, str):
        raise ValidationError(
            "text must be a string.", code="invalid_text", hint='Send {"text": "...", "title": "..."}.'
        )
    if not text.strip():  # before the title: a title alone would not fix an empty note
        raise ValidationError("The text is empty (only whitespace).", code="empty_text", hint="Send some text.")
    clean_title = title_clean(title if isinstance(title, str) else "")
    if not clean_title:
        raise ValidationError(
            "title is required with text.",
            code="invalid_title",
            hint='Add a title, e.g. {"title": "Acme annual report"}.',
        )
    content_type = DocumentType.MARKDOWN if markdown else DocumentType.TEXT
    return upload_validate(
        filename=text_filename(clean_title, content_type),
        data=text.encode("utf-8"),
        title=clean_title,
        source_url=source_url if isinstance(source_url, str) else "",
    )


def document_text_ingest(
    *,
    actor: User,
    graph: Graph,
    title: str,
    text: str,
    idempotency_key: str,
    source_url: str | None = None,
    source_type: str = SourceType.ARTICLE,
    published: date | None = None,
    markdown: bool = True,
    paid_from: HoldPayment | None = None,
) -> tuple[Document, bool]:
    """Ingest a text (research's sources, the benchmark's passages) into `graph` through the same path as a REST
    upload: validate, dedup by sha256 (a duplicate is returned unchanged, free), charge 5 + 1 per 3,000 characters
    under idempotency_key (or capture `paid_from` from its hold, research's sources), queue the pipeline on commit. Returns (document, created).
    Raises ValidationError/PayloadTooLarge (bad text), PermissionDenied/NotFound (graph), InsufficientCredits."""
    if source_type not in TEXT_SOURCE_TYPES:
        raise ValidationError(f"source_type must be one of {', '.join(TEXT_SOURCE_TYPES)}.", code="invalid_source_type")
    if not idempotency_key:
        raise ValidationError("idempotency_key is required.", code="invalid_idempotency_key")
    upload = text_upload_build(text=text, title=title, source_url=source_url, markdown=markdown)
    prepared: PreparedUpload = document_upload_prepare(
        actor=actor, upload=upload, scope=Scope(graph.scope), graph_id=str(graph.id)
    )
    return document_create(
        actor=actor,
        prepared=prepared,
        idempotency_key=idempotency_key,
        paid_from=paid_from,
        source_type=source_type,
        published=published,
    )
