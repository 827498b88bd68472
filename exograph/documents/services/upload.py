"""Upload: resolve the graph, find a duplicate, inspect in the sandbox, charge, queue the pipeline.

The upload use case owns its money: `document_upload_quote` answers a dry run (the price for the pages, and
billing's decision on the balance and the API key's monthly cap) and `document_upload` charges the same price
under the caller's idempotency key in the transaction that creates the document (nothing is charged when it
fails); the pipeline refunds the charge when processing fails (state._refund). REST, the web form, text ingest,
batches and research all come through `document_create`."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, replace
from datetime import date
from typing import TYPE_CHECKING, Any

from django.db import IntegrityError, transaction

from exograph.accounts.models import User
from exograph.core.errors import Conflict, ValidationError
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
    _document_resume,
    _pipeline_due,
    _pipeline_start,
    _price,
)
from exograph.documents.titles import text_heading, title_for_upload
from exograph.documents.validation import UploadedFile, text_decode, text_units
from exograph.graphs.models import Graph, GraphKind

if TYPE_CHECKING:
    from billing.models import Hold
    from billing.services import ChargeResult, Spent

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class PreparedUpload:
    """An upload checked and inspected, ready to charge: nothing has been written yet."""

    upload: UploadedFile
    graph: Graph
    sha256: str
    inspection: ParseResult
    existing: Document | None


def _graph_for_upload(*, actor: User, scope: Scope, graph_id: str | None, scope_argument: Scope | None) -> Graph:
    from exograph.graphs.selectors import graph_get_for_user
    from exograph.graphs.services import graph_default_for_user

    if not graph_id:
        return graph_default_for_user(actor=actor, scope=scope, kind=GraphKind.DOCUMENT)
    graph = graph_get_for_user(user=actor, graph_id=graph_id, write=True)
    if scope_argument is not None and Scope(scope_argument) != graph.scope:
        # As research refuses it: a named graph's scope is the upload's, and asking for the other one (to publish
        # a note into a private graph) must not land it there without a word.
        raise ValidationError(
            f"graph_scope is {scope_argument} but graph {graph.id} is {graph.scope}; the upload would be {graph.scope}.",
            code="graph_scope_mismatch",
            hint=f"Send graph_scope {graph.scope} (or leave it out), or pick a {scope_argument} graph.",
        )
    return graph


def document_upload_prepare(
    *,
    actor: User,
    upload: UploadedFile,
    scope: Scope,
    graph_id: str | None = None,
    scope_argument: Scope | None = None,
) -> PreparedUpload:
    """Resolve the target graph, find a duplicate, and inspect the file in the sandbox (page count).

    scope_argument: the graph_scope the caller sent, if any; with a graph_id of the other scope it is a 400
    graph_scope_mismatch (the header, a client's default, does not count against a named graph).
    Writes nothing but the caller's default graph on first use. Raises NotFound/PermissionDenied
    (graph), ValidationError (scope mismatch), ParseFailed (400: encrypted, no text, damaged, over a limit)."""
    graph = _graph_for_upload(actor=actor, scope=scope, graph_id=graph_id, scope_argument=scope_argument)
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
        text = text_decode(upload.data)
        inspection = ParseResult(pages=text_units(text), pages_estimated=False)
        title = title_for_upload(filename=upload.filename, given=upload.title, metadata=text_heading(text))
        upload = replace(upload, title=title)  # a generic file name gives way to the note's opening heading
    else:
        inspection = document_inspect(data=upload.data, content_type=DocumentType(upload.content_type))
        title = title_for_upload(filename=upload.filename, given=upload.title, metadata=inspection.title)
        upload = replace(upload, title=title)  # a generic file name gives way to the file's own /Title
    return PreparedUpload(upload=upload, graph=graph, sha256=sha256, inspection=inspection, existing=existing)


def upload_cost(prepared: PreparedUpload) -> int:
    """The one price decision of an upload, its quote's and its charge's: a file already in the graph is free,
    any other costs UPLOAD_ACTION's price for its pages (5 + 1/page; text 1 per 3,000 characters)."""
    return 0 if prepared.existing is not None else _price(prepared.inspection.pages)


def document_upload_quote(*, actor: User, prepared: PreparedUpload) -> dict[str, Any]:
    """What uploading `prepared` would cost `actor` now, as the REST dry_run answers it (billing.credits_quote:
    the price for its pages, and spend_check's decision on the balance and the API key's monthly cap); a file
    already in the graph costs nothing. Changes nothing. Pure read."""
    from billing.services import credits_quote_amount, quote_out

    quote = credits_quote_amount(account=actor, cost=upload_cost(prepared))
    return {
        **quote_out(quote),
        "filename": prepared.upload.filename,
        "pages": prepared.inspection.pages,
        "pages_estimated": prepared.inspection.pages_estimated,
        "balance_after": quote.balance - quote.cost,
        "graph": prepared.graph,
        "duplicate_of": str(prepared.existing.id) if prepared.existing else None,
    }


@dataclass(frozen=True)
class HoldPayment:
    """Pay an upload from an open hold instead of a charge: capture `amount` under the upload's idempotency key
    (research pays each source it reads from its session's hold; the read stays paid if the ingest fails)."""

    hold: Hold
    amount: int


@dataclass(frozen=True)
class UploadOutcome:
    """What `document_upload` did: the document, whether it is new (False: the same file was already in the
    graph, nothing charged) and what this request spent."""

    document: Document
    created: bool
    spent: Spent


def document_upload(*, actor: User, prepared: PreparedUpload, idempotency_key: str) -> UploadOutcome:
    """The upload use case (REST, the web form; MCP through REST): charge 5 + 1/page under `idempotency_key`
    in the transaction that creates the document, queue the pipeline on commit. A file already in the graph is
    free. Raises InsufficientCredits (402), KeyCapReached (403), with nothing written or charged."""
    from billing.services import Spent, credit_balance

    document, created, charge = _document_write(actor=actor, prepared=prepared, idempotency_key=idempotency_key)
    if charge is None:
        return UploadOutcome(document=document, created=created, spent=Spent(0, credit_balance(account=actor)))
    return UploadOutcome(
        document=document, created=created, spent=Spent(charge.credits_charged, balance=charge.balance)
    )


def document_create(
    *,
    actor: User,
    prepared: PreparedUpload,
    idempotency_key: str,
    source_type: str = SourceType.UPLOAD,
    published: date | None = None,
    queue: bool = True,
    paid_from: HoldPayment | None = None,
) -> tuple[Document, bool]:
    """Create the document, charge 5 + 1/page (text: 1 per 3,000 characters) under `idempotency_key` (or capture
    `paid_from` from its hold), queue the pipeline on commit (queue=False: the caller starts it, as the batch text
    ingest does for a whole group).

    Returns (document, created); created is False when the same file is already in the graph
    (then nothing is charged; an unfinished one that nothing would resume is resumed). Raises InsufficientCredits
    (402) and KeyCapReached (403) with nothing written."""
    document, created, _charge = _document_write(
        actor=actor,
        prepared=prepared,
        idempotency_key=idempotency_key,
        source_type=source_type,
        published=published,
        queue=queue,
        paid_from=paid_from,
    )
    return document, created


def _document_write(
    *,
    actor: User,
    prepared: PreparedUpload,
    idempotency_key: str,
    source_type: str = SourceType.UPLOAD,
    published: date | None = None,
    queue: bool = True,
    paid_from: HoldPayment | None = None,
) -> tuple[Document, bool, ChargeResult | None]:
    from billing.services import credits_capture, credits_charge

    if prepared.existing is not None:
        same = prepared.existing
        if same.status in (DocumentStatus.PENDING, DocumentStatus.PROCESSING):
            # The same file again while it is unfinished: if nothing would resume it (its pipeline lost its
            # message or its runner), resume it now; still paid by its first charge.
            if _document_resume(same, stuck_only=True) == "resumed":
                same.refresh_from_db()
        return same, False, None
    upload = prepared.upload
    result = None
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
            reference = f"document {document.id} ({upload.filename[:80]})"
            if paid_from is not None:
                credits_capture(
                    hold=paid_from.hold, amount=paid_from.amount, idempotency_key=idempotency_key, reference=reference
                )
                document.charge_key = ""  # no refund key: a source read from a hold stays paid for
            else:
                result = credits_charge(
                    account=actor,
                    action=UPLOAD_ACTION,
                    units=prepared.inspection.pages,
                    idempotency_key=idempotency_key,
                    reference=reference,
                )
                document.charge_key = idempotency_key
            # credits_charge priced it as upload_cost does (UPLOAD_ACTION for the pages); a hold's capture records
            # the upload's own price
            document.credits_charged = result.credits_charged if result else upload_cost(prepared)
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
        return existing, False, None
    logger.info("document %s created (%s pages) in graph %s", document.id, document.pages, document.graph_id)
    return document, True, result
