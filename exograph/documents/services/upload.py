"""Upload: resolve the graph, find a duplicate, inspect in the sandbox, charge, queue the pipeline."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

from django.db import IntegrityError, transaction

from exograph.accounts.models import User
from exograph.core.errors import Conflict
from exograph.core.scope import Scope
from exograph.documents.models import (
    TEXT_TYPES,
    Document,
    DocumentBlob,
    DocumentStatus,
    DocumentType,
    SourceType,
)
from exograph.documents.parsing import ParseResult, document_inspect
from exograph.documents.services.state import (
    UPLOAD_ACTION,
    Charger,
    _document_resume,
    _pipeline_due,
    _pipeline_start,
    _price,
)
from exograph.documents.validation import UploadedFile, text_decode, text_units
from exograph.graphs.models import Graph, GraphKind

if TYPE_CHECKING:
    from billing.metering import Meter

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class PreparedUpload:
    """An upload checked and inspected, ready to charge: nothing has been written yet."""

    upload: UploadedFile
    graph: Graph
    sha256: str
    inspection: ParseResult
    existing: Document | None


def _graph_for_upload(*, actor: User, scope: Scope, graph_id: str | None) -> Graph:
    from exograph.graphs.selectors import graph_get_for_user
    from exograph.graphs.services import graph_default_for_user

    if graph_id:
        return graph_get_for_user(user=actor, graph_id=graph_id, write=True)
    return graph_default_for_user(actor=actor, scope=scope, kind=GraphKind.DOCUMENT)


def document_upload_prepare(
    *, actor: User, upload: UploadedFile, scope: Scope, graph_id: str | None = None
) -> PreparedUpload:
    """Resolve the target graph, find a duplicate, and inspect the file in the sandbox (page count).

    Writes nothing but the caller's default graph on first use. Raises NotFound/PermissionDenied
    (graph), ParseFailed (400: encrypted, no text, damaged, over a limit)."""
    graph = _graph_for_upload(actor=actor, scope=scope, graph_id=graph_id)
    sha256 = hashlib.sha256(upload.data).hexdigest()
    existing = (
        Document.objects.select_related("graph")
        .filter(graph=graph, sha256=sha256, deleted_at__isnull=True)
        .order_by("created")
        .first()
    )
    if existing is not None and existing.status in (DocumentStatus.FAILED, DocumentStatus.CANCELLED):
        raise Conflict(
            f"This file is already in the graph as document {existing.id}, which is {existing.status}.",
            code="document_exists_" + str(existing.status),
            hint=f"Retry it with POST /api/v1/documents/{existing.id}/retry/, or delete it and upload again.",
            extra={"document_id": str(existing.id)},
        )
    if existing is not None:
        inspection = ParseResult(pages=existing.pages, pages_estimated=existing.pages_estimated)
    elif upload.content_type in TEXT_TYPES:
        # No sandbox for text: validation decoded it; units are characters / DOCUMENTS_TEXT_CHARS_PER_UNIT.
        inspection = ParseResult(pages=text_units(text_decode(upload.data)), pages_estimated=False)
    else:
        inspection = document_inspect(data=upload.data, content_type=DocumentType(upload.content_type))
    return PreparedUpload(upload=upload, graph=graph, sha256=sha256, inspection=inspection, existing=existing)


def document_upload_quote(*, actor: User, prepared: PreparedUpload) -> dict[str, Any]:
    """What uploading `prepared` would cost `actor` now, as the REST dry_run answers it (billing.credits_quote:
    the price for its pages, and spend_check's decision on the balance and the API key's monthly cap); a file
    already in the graph costs nothing. Changes nothing. Pure read."""
    from billing.services import credits_quote, credits_quote_amount, quote_out

    if prepared.existing is not None:
        quote = credits_quote_amount(account=actor, cost=0)
    else:
        quote = credits_quote(account=actor, action=UPLOAD_ACTION, units=prepared.inspection.pages)
    return {
        **quote_out(quote),
        "filename": prepared.upload.filename,
        "pages": prepared.inspection.pages,
        "pages_estimated": prepared.inspection.pages_estimated,
        "balance_after": quote.balance - quote.cost,
        "graph": prepared.graph,
        "duplicate_of": str(prepared.existing.id) if prepared.existing else None,
    }


def document_create(
    *,
    actor: User,
    prepared: PreparedUpload,
    charge: Charger,
    source_type: str = SourceType.UPLOAD,
    published: date | None = None,
    queue: bool = True,
) -> tuple[Document, bool]:
    """Create the document, charge 5 + 1/page (text: 1 per 3,000 characters) through `charge`, queue the pipeline on commit
    (queue=False: the caller starts it, as the batch text ingest does for a whole group).

    Returns (document, created); created is False when the same file is already in the graph
    (then nothing is charged; an unfinished one that nothing would resume is resumed). Raises InsufficientCredits (402) with nothing written."""
    if prepared.existing is not None:
        same = prepared.existing
        if same.status in (DocumentStatus.PENDING, DocumentStatus.PROCESSING):
            # The same file again while it is unfinished: if nothing would resume it (its pipeline lost its
            # message or its runner), resume it now; still paid by its first charge.
            if _document_resume(same, stuck_only=True) == "resumed":
                same.refresh_from_db()
        return same, False
    upload = prepared.upload
    try:
        with transaction.atomic():
            document = Document.objects.create(
                owner=actor,
                graph=prepared.graph,
                filename=upload.filename,
                sha256=prepared.sha256,
                size=len(upload.data),
                content_type=upload.content_type,
                pages=prepared.inspection.pages,
                pages_estimated=prepared.inspection.pages_estimated,
                title=upload.title,
                source_url=upload.source_url,
                source_type=source_type,
                published=published,
            )
            DocumentBlob.objects.create(document=document, data=upload.data)
            charge_key = charge(prepared.inspection.pages, f"document {document.id} ({upload.filename[:80]})")
            document.charge_key = charge_key
            document.credits_charged = _price(prepared.inspection.pages)
            document.save(update_fields=["charge_key", "credits_charged", "modified"])
            if queue:  # recorded as due in this transaction: a message lost before it is sent is sent by the sweep
                token = _pipeline_due(str(document.id))
                transaction.on_commit(lambda: _pipeline_start(str(document.id), token))
    except IntegrityError:
        # The same file reached the same graph concurrently; the first one wins, nothing charged here.
        existing = Document.objects.filter(
            graph=prepared.graph, sha256=prepared.sha256, deleted_at__isnull=True
        ).first()
        if existing is None:
            raise
        return existing, False
    logger.info("document %s created (%s pages) in graph %s", document.id, document.pages, document.graph_id)
    return document, True


def document_charge_direct(*, actor: User, key: str) -> Charger:
    """A Charger for callers without a billing Meter (the web upload form)."""
    from billing.services import credits_charge

    def charge(units: int, reference: str) -> str:
        credits_charge(account=actor, action=UPLOAD_ACTION, units=units, idempotency_key=key, reference=reference)
        return key

    return charge


def document_charge_metered(meter: Meter) -> Charger:
    """A Charger through a billing Meter (the REST upload and the web upload form): the charge is the meter's,
    so an Idempotency-Key (or the web form's token) replays it instead of charging again."""

    def charge(units: int, reference: str) -> str:
        meter.charge(action=UPLOAD_ACTION, units=units, reference=reference)
        return meter.charge_key

    return charge
