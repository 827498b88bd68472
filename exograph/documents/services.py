"""Document use cases: upload (validate → inspect → charge → queue), the ingest stages, cancel, retry, delete.

The pipeline is three Celery tasks (see tasks.py), each calling one stage here with the document id:
parse (+chunk) → embed → index (extract, write graph, world merge). Every stage is idempotent:
it rebuilds its own output, so a redelivered task (acks_late) or a retry just runs it again.
Between stages a cancelled or deleted document stops the pipeline. Any failure marks the document
`failed` with the stage and reason, removes whatever reached the graph and refunds the charge.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from exograph.accounts.models import User
from exograph.celery import app as celery_app
from exograph.core.errors import Conflict, ExoGraphError, NotFound, TransientError
from exograph.core.queues import Queue
from exograph.core.scope import Scope
from exograph.documents.chunking import chunk_blocks
from exograph.documents.events import document_event_send
from exograph.documents.extraction import document_extract, extraction_from_json, extraction_to_json
from exograph.documents.models import (
    ACTIVE_STATUSES,
    Document,
    DocumentBlob,
    DocumentChunk,
    DocumentStage,
    DocumentStatus,
    DocumentType,
)
from exograph.documents.parsing import ParseResult, document_inspect, document_text_extract
from exograph.documents.selectors import document_get_for_user
from exograph.documents.validation import UploadedFile
from exograph.graphs.models import Graph, GraphKind

logger = logging.getLogger(__name__)

UPLOAD_ACTION = "upload"
# Progress (percent) reached at the end of each stage.
STAGE_PROGRESS = {
    DocumentStage.PARSE: 10,
    DocumentStage.CHUNK: 20,
    DocumentStage.EMBED: 70,
    DocumentStage.EXTRACT: 85,
    DocumentStage.WRITE: 99,
    DocumentStage.DONE: 100,
}

# The pipeline's Celery task names (tasks.py registers them; services start the pipeline by name, so
# the imports run one way, tasks → services).
PARSE_TASK = "documents.document_parse"
EMBED_TASK = "documents.document_embed"
INDEX_TASK = "documents.document_index"

# charge(units, reference) -> the ledger idempotency key used. The REST view passes the billing Meter's.
Charger = Callable[[int, str], str]


@dataclass(frozen=True)
class ChunkText:
    id: str
    text: str


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
    else:
        inspection = document_inspect(data=upload.data, content_type=DocumentType(upload.content_type))
    return PreparedUpload(upload=upload, graph=graph, sha256=sha256, inspection=inspection, existing=existing)


def document_create(*, actor: User, prepared: PreparedUpload, charge: Charger) -> tuple[Document, bool]:
    """Create the document, charge 5 + 1/page through `charge`, and queue the pipeline on commit.

    Returns (document, created); created is False when the same file is already in the graph
    (then nothing is charged). Raises InsufficientCredits (402) with nothing written."""
    if prepared.existing is not None:
        return prepared.existing, False
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
            )
            DocumentBlob.objects.create(document=document, data=upload.data)
            charge_key = charge(prepared.inspection.pages, f"document {document.id} ({upload.filename[:80]})")
            document.charge_key = charge_key
            document.credits_charged = _price(prepared.inspection.pages)
            document.save(update_fields=["charge_key", "credits_charged", "modified"])
            transaction.on_commit(lambda: _pipeline_start(str(document.id)))
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


def _price(pages: int) -> int:
    from billing.prices import price_for

    return price_for(UPLOAD_ACTION, pages)


def document_charge_direct(*, actor: User, key: str) -> Charger:
    """A Charger for callers without a billing Meter (the web upload form)."""
    from billing.services import credits_charge

    def charge(units: int, reference: str) -> str:
        credits_charge(account=actor, action=UPLOAD_ACTION, units=units, idempotency_key=key, reference=reference)
        return key

    return charge


def _pipeline_start(document_id: str) -> None:
    try:
        celery_app.signature(PARSE_TASK, args=(document_id,), queue=Queue.INGEST.value).delay()
    except Exception:  # the broker is down: say so on the document and give the credits back
        logger.exception("could not queue document %s", document_id)
        document = Document.objects.select_related("graph", "owner").filter(pk=document_id).first()
        if document is not None:
            _fail(document, stage=DocumentStage.QUEUED, reason="The ingest queue is unavailable. Retry the document.")


# --- progress and state -------------------------------------------------------------------------


def _progress(document: Document, *, stage: str, progress: int) -> None:
    document.stage = stage
    document.progress = max(0, min(100, progress))
    Document.objects.filter(pk=document.pk).update(stage=document.stage, progress=document.progress)
    document_event_send(document)


def _running(document_id: str) -> Document | None:
    """The document if the pipeline should go on (not cancelled, failed, deleted or already done)."""
    document = Document.objects.select_related("graph", "owner").filter(pk=document_id).first()
    if document is None or document.deleted_at is not None:
        logger.info("document %s vanished; pipeline stops", document_id)
        return None
    if document.status not in (DocumentStatus.PENDING, DocumentStatus.PROCESSING):
        logger.info("document %s is %s; pipeline stops", document_id, document.status)
        return None
    return document


def _fail(document: Document, *, stage: str, reason: str) -> None:
    """Mark failed, remove anything written to the graph, drop stage data and refund the charge."""
    updated = Document.objects.filter(
        pk=document.pk, status__in=[DocumentStatus.PENDING, DocumentStatus.PROCESSING], deleted_at__isnull=True
    ).update(status=DocumentStatus.FAILED, failure_stage=stage, failure_reason=reason[:2000], modified=timezone.now())
    if not updated:
        # Cancelled, deleted, or gone with its graph (whose deletion refunded it): nothing to undo here.
        logger.info("document %s stopped before failing at %s", document.pk, stage)
        return
    document.refresh_from_db()
    _cleanup(document)
    _refund(document, reason=f"processing failed at {stage}")
    logger.warning("document %s failed at %s", document.id, stage)
    document_event_send(document)


def _cleanup(document: Document) -> None:
    from exograph.graphs.services import graph_document_remove

    DocumentChunk.objects.filter(document=document).delete()
    try:
        graph_document_remove(graph=document.graph, document_id=str(document.id))
    except Exception:
        # The store is down: the next retry or delete removes it again (remove is idempotent).
        logger.exception("could not remove document %s from graph %s", document.id, document.graph_id)


def _refund(document: Document, *, reason: str) -> None:
    from billing.services import credits_refund

    if not document.charge_key or document.refunded:
        return
    try:
        credits_refund(account=document.owner, charge_key=document.charge_key, reason=reason)
    except NotFound:
        logger.warning("document %s: no charge %s to refund", document.id, document.charge_key)
    Document.objects.filter(pk=document.pk).update(refunded=True)
    document.refunded = True


def _stage(document_id: str, stage: str, work: Callable[[Document], None], *, last_attempt: bool) -> bool:
    """Run one stage; True if the pipeline should continue.

    A TransientError (FalkorDB, an embedding or LLM provider down) is raised again while attempts
    remain, so the Celery task retries the stage with backoff; on the last attempt, and for every
    other error, the failure is recorded (document failed, graph cleaned, charge refunded), never raised."""
    document = _running(document_id)
    if document is None:
        return False
    if document.status == DocumentStatus.PENDING:
        # Conditional, so a cancel that lands between the read and this write is never overwritten.
        if not Document.objects.filter(pk=document.pk, status=DocumentStatus.PENDING).update(
            status=DocumentStatus.PROCESSING
        ):
            return False
        document.status = DocumentStatus.PROCESSING
    _progress(document, stage=stage, progress=document.progress)
    try:
        work(document)
    except TransientError as exc:
        if not last_attempt and _running(document_id) is not None:
            logger.warning(
                "document %s: stage %s hit a transient error (%s); the task retries", document_id, stage, exc.code
            )
            raise
        _fail(document, stage=stage, reason=exc.message + (f" {exc.hint}" if exc.hint else ""))
        return False
    except ExoGraphError as exc:
        _fail(document, stage=stage, reason=exc.message + (f" {exc.hint}" if exc.hint else ""))
        return False
    except Exception as exc:
        logger.exception("document %s: stage %s crashed", document_id, stage)
        _fail(document, stage=stage, reason=f"Internal error during {stage} ({type(exc).__name__}).")
        return False
    # Cancelled (or deleted) while this stage ran: undo what reached the graph.
    current = Document.objects.filter(pk=document_id).values_list("status", "deleted_at").first()
    if current is None or current[0] != DocumentStatus.PROCESSING or current[1] is not None:
        if current is not None and current[0] == DocumentStatus.CANCELLED:
            _cleanup(document)
        return False
    return True


# --- stages -------------------------------------------------------------------------------------


def document_stage_parse(*, document_id: str, last_attempt: bool = True) -> bool:
    """Stage 1: parse in the sandbox and chunk; stores the chunks (replacing earlier ones)."""

    def work(document: Document) -> None:
        blob = DocumentBlob.objects.filter(document=document).first()
        if blob is None:
            raise Conflict("The uploaded file is no longer stored.", hint="Upload the file again.")
        parsed = document_text_extract(
            data=bytes(blob.data), content_type=DocumentType(document.content_type), pages=document.pages
        )
        _progress(document, stage=DocumentStage.CHUNK, progress=STAGE_PROGRESS[DocumentStage.PARSE])
        chunks = chunk_blocks(
            document_id=str(document.id),
            blocks=parsed.blocks,
            max_tokens=settings.DOCUMENTS_CHUNK_TOKENS,
            overlap_tokens=settings.DOCUMENTS_CHUNK_OVERLAP,
        )
        with transaction.atomic():
            DocumentChunk.objects.filter(document=document).delete()
            DocumentBlob.objects.filter(document=document).update(extraction=None)
            DocumentChunk.objects.bulk_create(
                DocumentChunk(
                    id=c.id, document=document, ordinal=c.ordinal, page=c.page, heading=c.heading, text=c.text
                )
                for c in chunks
            )
            Document.objects.filter(pk=document.pk).update(chunk_count=len(chunks), warnings=[])
        _progress(document, stage=DocumentStage.CHUNK, progress=STAGE_PROGRESS[DocumentStage.CHUNK])

    return _stage(document_id, DocumentStage.PARSE, work, last_attempt=last_attempt)


def document_stage_embed(*, document_id: str, last_attempt: bool = True) -> bool:
    """Stage 2: embed the chunks that have no vector yet, in batches (progress after each batch)."""
    from exograph.graphs.embeddings import get_embedder

    def work(document: Document) -> None:
        embedder = get_embedder()
        pending = list(DocumentChunk.objects.filter(document=document, embedding__isnull=True).order_by("ordinal"))
        total = max(1, DocumentChunk.objects.filter(document=document).count())
        done = total - len(pending)
        batch = settings.DOCUMENTS_EMBED_BATCH
        start, span = (
            STAGE_PROGRESS[DocumentStage.CHUNK],
            STAGE_PROGRESS[DocumentStage.EMBED] - STAGE_PROGRESS[DocumentStage.CHUNK],
        )
        chunks = [
            ChunkText(id=r.id, text=r.text) for r in DocumentChunk.objects.filter(document=document).order_by("ordinal")
        ]
        # Extraction (pure Python, holds the GIL) runs beside the embedding (torch releases the GIL while it
        # computes), so most of its time hides behind the embedder's. Its result waits on the blob row.
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="extract") as pool:
            extracting = pool.submit(document_extract, chunks)
            for offset in range(0, len(pending), batch):
                if not Document.objects.filter(pk=document.pk, status=DocumentStatus.PROCESSING).exists():
                    return  # cancelled mid-way; _stage notices and stops
                rows = pending[offset : offset + batch]
                vectors = embedder.embed([row.text for row in rows])
                for row, vector in zip(rows, vectors, strict=True):
                    row.embedding = vector
                DocumentChunk.objects.bulk_update(rows, ["embedding"])
                done += len(rows)
                _progress(document, stage=DocumentStage.EMBED, progress=start + span * done // total)
            extraction = extracting.result()
        DocumentBlob.objects.filter(document=document).update(extraction=extraction_to_json(extraction))
        Document.objects.filter(pk=document.pk).update(warnings=extraction.warnings)

    return _stage(document_id, DocumentStage.EMBED, work, last_attempt=last_attempt)


def document_stage_index(*, document_id: str, last_attempt: bool = True) -> bool:
    """Stage 3: extract entities and relations, write the graph (and the world graph), mark processed."""
    from exograph.graphs.services import graph_document_write
    from exograph.graphs.types import ChunkIn, EntityIn, MentionIn, RelationIn

    def work(document: Document) -> None:
        rows = list(DocumentChunk.objects.filter(document=document).order_by("ordinal"))
        if any(row.embedding is None for row in rows):
            raise Conflict("Some chunks have no embedding yet.", hint="Retry the document.")
        _progress(document, stage=DocumentStage.EXTRACT, progress=STAGE_PROGRESS[DocumentStage.EMBED])
        saved = DocumentBlob.objects.filter(document=document).values_list("extraction", flat=True).first()
        extraction = extraction_from_json(saved) if saved else document_extract(rows)
        _progress(document, stage=DocumentStage.WRITE, progress=STAGE_PROGRESS[DocumentStage.EXTRACT])
        if not Document.objects.filter(pk=document.pk, status=DocumentStatus.PROCESSING).exists():
            return
        graph_document_write(
            graph=document.graph,
            document_id=str(document.id),
            filename=document.filename,
            contributor=document.owner,
            chunks=[
                ChunkIn(id=r.id, text=r.text, page=r.page, ordinal=r.ordinal, embedding=list(r.embedding or []))
                for r in rows
            ],
            entities=[
                EntityIn(name=e.name, type=e.type, description=e.description, aliases=tuple(e.aliases))
                for e in extraction.entities
            ],
            mentions=[
                MentionIn(chunk_id=m.chunk_id, entity_name=m.name, entity_type=m.type) for m in extraction.mentions
            ],
            relations=[
                RelationIn(
                    source_name=r.source,
                    source_type=r.source_type,
                    target_name=r.target,
                    target_type=r.target_type,
                    type=r.type,
                    chunk_ids=tuple(r.chunk_ids),
                    weight=r.weight,
                )
                for r in extraction.relations
            ],
        )
        with transaction.atomic():
            done = Document.objects.filter(pk=document.pk, status=DocumentStatus.PROCESSING).update(
                status=DocumentStatus.PROCESSED,
                stage=DocumentStage.DONE,
                progress=100,
                entity_count=len(extraction.entities),
                relation_count=len(extraction.relations),
                warnings=extraction.warnings,
                processed_at=timezone.now(),
                modified=timezone.now(),
            )
            if done:
                DocumentChunk.objects.filter(document=document).delete()
                DocumentBlob.objects.filter(document=document).delete()
        if not done:
            return  # cancelled, deleted or gone with its graph while the graph was written; _stage cleans up
        document.refresh_from_db()
        document_event_send(document)
        logger.info("document %s processed", document.id)

    return _stage(document_id, DocumentStage.EXTRACT, work, last_attempt=last_attempt)


# --- user actions -------------------------------------------------------------------------------


def document_cancel(*, actor: User, document_id: object) -> Document:
    """Cancel a pending or processing document; the pipeline stops at the next stage boundary and the
    charge is refunded. Raises NotFound, Conflict (already finished)."""
    document = document_get_for_user(user=actor, document_id=document_id)
    updated = Document.objects.filter(
        pk=document.pk, status__in=[DocumentStatus.PENDING, DocumentStatus.PROCESSING]
    ).update(status=DocumentStatus.CANCELLED, modified=timezone.now())
    document.refresh_from_db()
    if not updated:
        raise Conflict(
            f"The document is {document.status}; only pending or processing documents can be cancelled.",
            code="document_not_cancellable",
            hint="Delete it instead with DELETE /api/v1/documents/{id}/.",
        )
    _cleanup(document)
    _refund(document, reason="cancelled")
    document_event_send(document)
    return document


def document_retry(*, actor: User, document_id: object, charge: Charger) -> tuple[Document, int]:
    """Run a failed or cancelled document's pipeline again. It is never paid twice: a failure refunded
    the charge, so the retry charges once more (the document is paid exactly once when it succeeds).
    Returns (document, credits charged now). Raises NotFound, Conflict (not failed/cancelled), 402."""
    document = document_get_for_user(user=actor, document_id=document_id)
    if document.status not in (DocumentStatus.FAILED, DocumentStatus.CANCELLED):
        raise Conflict(
            f"The document is {document.status}; only failed or cancelled documents can be retried.",
            code="document_not_retryable",
            hint="Check its status with GET /api/v1/documents/{id}/.",
        )
    if not DocumentBlob.objects.filter(document=document).exists():
        raise Conflict("The uploaded file is no longer stored.", code="document_file_gone", hint="Upload it again.")
    charged = 0
    with transaction.atomic():
        locked = Document.objects.select_for_update().get(pk=document.pk)
        if locked.status not in (DocumentStatus.FAILED, DocumentStatus.CANCELLED):
            raise Conflict("The document is already being retried.", code="document_not_retryable")
        fields: dict[str, Any] = {
            "status": DocumentStatus.PENDING,
            "stage": DocumentStage.QUEUED,
            "progress": 0,
            "failure_stage": "",
            "failure_reason": "",
            "warnings": [],
            "attempts": locked.attempts + 1,
            "modified": timezone.now(),
        }
        if locked.refunded or not locked.charge_key:
            fields["charge_key"] = charge(locked.pages, f"document {locked.id} retry {locked.attempts + 1}")
            fields["refunded"] = False
            charged = _price(locked.pages)
        Document.objects.filter(pk=locked.pk).update(**fields)
        transaction.on_commit(lambda: _pipeline_start(str(document.id)))
    document.refresh_from_db()
    document_event_send(document)
    return document, charged


def document_delete(*, actor: User, document_id: object) -> None:
    """Delete a document: its chunks, mentions, relations it alone supported and its world-graph
    contributions go. A document not processed yet (pending or processing) is refunded, as by cancel;
    a processed or failed one is not (a failure was refunded already).
    Raises NotFound, ServiceUnavailable (graph store down)."""
    from exograph.graphs.services import graph_document_remove

    document = document_get_for_user(user=actor, document_id=document_id)
    now = timezone.now()
    # Stop a running pipeline first so it cannot write after the removal (conditional: a pipeline
    # that finishes in between leaves a processed document, which is deleted without a refund).
    unprocessed = bool(
        Document.objects.filter(pk=document.pk, status__in=ACTIVE_STATUSES).update(
            deleted_at=now, status=DocumentStatus.CANCELLED, modified=now
        )
    )
    if not unprocessed:
        Document.objects.filter(pk=document.pk).update(deleted_at=now)
    try:
        graph_document_remove(graph=document.graph, document_id=str(document.id))
    except Exception:
        Document.objects.filter(pk=document.pk).update(deleted_at=None, status=document.status)
        raise
    DocumentChunk.objects.filter(document=document).delete()
    DocumentBlob.objects.filter(document=document).delete()
    if unprocessed:
        document.refresh_from_db()
        _refund(document, reason="deleted before processing")
    logger.info("document %s deleted", document.id)


def document_refund_unprocessed(*, document: Document) -> None:
    """Refund a document that is being removed with its graph (or account) before it was processed.

    Called from the Document pre_delete receiver, inside the deleting transaction. Writes a refund entry."""
    if document.status not in ACTIVE_STATUSES or document.deleted_at is not None:
        return
    _refund(document, reason="its graph was deleted before processing")
    logger.info("document %s removed with graph %s before processing; refunded", document.pk, document.graph_id)
