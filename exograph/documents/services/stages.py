"""The three ingest stages (parse, embed, index), each idempotent, run by the Celery tasks."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from exograph.core.errors import Conflict, ExoGraphError, TransientError
from exograph.core.leases import LeaseBusy, lease_hold, lease_park
from exograph.documents.chunking import chunk_blocks
from exograph.documents.events import document_event_send
from exograph.documents.extraction import document_extract, extraction_from_json, extraction_to_json
from exograph.documents.extraction.types import Entity, Extraction, Mention
from exograph.documents.models import (
    TEXT_TYPES,
    Document,
    DocumentBlob,
    DocumentChunk,
    DocumentOriginal,
    DocumentStage,
    DocumentStatus,
    DocumentType,
)
from exograph.documents.parsing import ParseResult, document_text_extract, text_blocks
from exograph.documents.services.state import (
    DOCUMENT_LEASE,
    EMBED_TASK,
    INDEX_TASK,
    RETRY_BACKOFF_MAX,
    STAGE_PROGRESS,
    STAGE_TASKS,
    _cleanup,
    _fail,
    _progress,
    _running,
    _stage_queue,
)
from exograph.documents.validation import text_decode

if TYPE_CHECKING:
    from exograph.graphs.types import EntityIn, MentionIn, RelationIn

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ChunkText:
    id: str
    text: str


# The task each stage hands the document on to when it succeeds (the last stage ends the pipeline).
_NEXT_TASK = {DocumentStage.PARSE: EMBED_TASK, DocumentStage.EMBED: INDEX_TASK}


def _stage(
    document_id: str, stage: str, work: Callable[[Document], None], *, last_attempt: bool, queue_next: bool
) -> bool:
    """Run one stage; True if the pipeline should continue.

    On success the stage's lease becomes the next stage's (unheld, due) in one update, and only then, with
    queue_next (the Celery tasks), is the next stage's message sent: a broker that is down then, or a worker
    that dies before sending, leaves a due lease that the sweep resumes. Without queue_next (the batch runs the
    next stage itself) the lease stays due for the kind's requeue window, in case the batch's worker dies.

    A TransientError (FalkorDB, an embedding or LLM provider down) is raised again while attempts
    remain, so the Celery task retries the stage with backoff; on the last attempt, and for every
    other error, the failure is recorded (document failed, graph cleaned, charge refunded), never raised.

    The stage runs under the document's lease (exograph/core/leases.py): if this worker dies, the lease
    expires and the sweep queues the stage again (or fails and refunds the document). A duplicate run
    (the broker redelivered a message the resumed run already took) finds the lease held and stops."""
    document_id = str(document_id)
    at = _unfinished_at(document_id)  # a light read: the whole row is read once the lease is ours
    if at is None:
        return False
    if _stage_passed(at, stage):  # a late redelivery: leave the lease alone (it is the next stage's now)
        logger.info("document %s is past stage %s (at %s); this late run stops", document_id, stage, at)
        return False
    step = STAGE_TASKS[DocumentStage(stage)]
    next_task = _NEXT_TASK.get(DocumentStage(stage))
    try:
        with lease_hold(kind=DOCUMENT_LEASE, subject_id=document_id, step=step) as held:
            go_on = _stage_leased(document_id, stage, work, last_attempt=last_attempt)
            if go_on and next_task is not None:
                held.hand_off(next_task, queued=not queue_next)  # the batch runs the next stage itself
    except TransientError:
        documents_retry_park([document_id])
        raise
    except LeaseBusy:
        logger.info("document %s: stage %s already runs elsewhere; this duplicate stops", document_id, stage)
        return False
    if go_on and next_task is not None and queue_next:
        _stage_queue(document_id, next_task, held.next_token)
    return go_on


def _unfinished_at(document_id: str) -> str | None:
    """The sub-stage of a document the pipeline should go on with (as state._running decides, reading three
    columns instead of the row with its graph and owner); None if it is cancelled, failed, deleted or done."""
    row = Document.objects.filter(pk=document_id).values_list("status", "stage", "deleted_at").first()
    if row is None or row[2] is not None:
        logger.info("document %s vanished; pipeline stops", document_id)
        return None
    if row[0] not in (DocumentStatus.PENDING, DocumentStatus.PROCESSING):
        logger.info("document %s is %s; pipeline stops", document_id, row[0])
        return None
    return str(row[1])


def documents_retry_park(document_ids: Sequence[str]) -> None:
    """Celery retries these documents' stages after its backoff: park each processing one's lease for that long,
    so a retry message lost with its worker is resumed by the lease sweep (exograph/core/leases.py)."""
    for pk, stage in Document.objects.filter(pk__in=list(document_ids), status=DocumentStatus.PROCESSING).values_list(
        "pk", "stage"
    ):
        lease_park(kind=DOCUMENT_LEASE, subject_id=str(pk), step=_stage_task(stage), seconds=RETRY_BACKOFF_MAX)


def _stage_leased(document_id: str, stage: str, work: Callable[[Document], None], *, last_attempt: bool) -> bool:
    # Again, now that the lease is ours: a run that held it may have moved on. Only the index stage writes to the
    # graph (and names its contributor), so only it reads the graph and owner with the row.
    document = _running(document_id, related=stage == DocumentStage.EXTRACT)
    if document is None or _stage_passed(document.stage, stage):
        if document is not None:
            logger.info("document %s is past stage %s (at %s); this late run stops", document_id, stage, document.stage)
        return False
    if document.status == DocumentStatus.PENDING:
        # Conditional, so a cancel that lands between the read and this write is never overwritten.
        if not Document.objects.filter(pk=document.pk, status=DocumentStatus.PENDING).update(
            status=DocumentStatus.PROCESSING, stage=stage
        ):
            return False
        document.status, document.stage = DocumentStatus.PROCESSING, stage
        document_event_send(document)
    else:
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


# The sub-stages each task goes through, in order (a task's run is late once the document is past its last one).
_STAGE_ORDER = [DocumentStage.QUEUED, DocumentStage.PARSE, DocumentStage.CHUNK, DocumentStage.EMBED,
                DocumentStage.EXTRACT, DocumentStage.WRITE, DocumentStage.DONE]  # fmt: skip
_STAGE_LAST = {DocumentStage.PARSE: DocumentStage.CHUNK, DocumentStage.EMBED: DocumentStage.EMBED,
               DocumentStage.EXTRACT: DocumentStage.DONE}  # fmt: skip


def _stage_passed(at: str, stage: str) -> bool:
    """True when a document at sub-stage `at` already went past what this stage's task does (a redelivered old
    message)."""
    if at not in _STAGE_ORDER:
        return False
    return _STAGE_ORDER.index(DocumentStage(at)) > _STAGE_ORDER.index(_STAGE_LAST[DocumentStage(stage)])


def _stage_task(stage: str) -> str:
    """The task that runs a document at this sub-stage: the first whose last sub-stage is not behind it."""
    at = _STAGE_ORDER.index(DocumentStage(stage)) if stage in _STAGE_ORDER else 0
    task_stage = next(t for t in STAGE_TASKS if _STAGE_ORDER.index(_STAGE_LAST[t]) >= at)
    return STAGE_TASKS[task_stage]


def _title_entity_add(extraction: Extraction, *, title: str, chunk_ids: list[str]) -> None:
    """Make a titled document's title an entity mentioned by every one of its chunks (HippoRAG-style: a
    passage about "X" links to X, so other passages naming X reach it). Reuses the type of a same-named
    extracted entity so both merge into one node; else CONCEPT. Mutates extraction; no I/O."""
    from exograph.graphs.types import normalize_name, title_bare

    key = normalize_name(title)
    if not key:
        return
    same = next((e for e in extraction.entities if normalize_name(e.name) == key), None)
    if same is None:
        same = Entity(name=title, type="CONCEPT", description=f"The subject of the document titled {title[:200]}.")
        extraction.entities.append(same)
    if (bare := title_bare(title)) and bare not in same.aliases:
        same.aliases.append(bare)  # "Whispers (Corina song)" is asked about, and written, as "Whispers"
    mentioned = {(m.chunk_id, normalize_name(m.name), m.type) for m in extraction.mentions}
    for chunk_id in chunk_ids:
        if (chunk_id, key, same.type) not in mentioned:
            extraction.mentions.append(Mention(chunk_id=chunk_id, name=same.name, type=same.type))


# --- stages -------------------------------------------------------------------------------------


def _parse_progress(document: Document) -> Callable[[float], None]:
    """Progress per parsed (or OCR'd) page, within the parse stage's share; written only when the percent moves."""
    start, span = document.progress, STAGE_PROGRESS[DocumentStage.PARSE] - document.progress

    def report(fraction: float) -> None:
        value = start + int(span * min(1.0, max(0.0, fraction)))
        if value > document.progress:
            _progress(document, stage=DocumentStage.PARSE, progress=value)

    return report


def document_stage_parse(*, document_id: str, last_attempt: bool = True, queue_next: bool = False) -> bool:
    """Stage 1: parse in the sandbox and chunk; stores the chunks (replacing earlier ones)."""

    def work(document: Document) -> None:
        blob = DocumentBlob.objects.filter(document=document).first()
        if blob is None:
            raise Conflict("The uploaded file is no longer stored.", hint="Upload the file again.")
        content_type = DocumentType(document.content_type)
        if content_type in TEXT_TYPES:
            parsed = ParseResult(
                pages=document.pages,
                pages_estimated=False,
                blocks=text_blocks(text=text_decode(bytes(blob.data)), markdown=content_type == DocumentType.MARKDOWN),
            )
        else:
            parsed = document_text_extract(
                data=bytes(blob.data),
                content_type=content_type,
                pages=document.pages,
                progress=_parse_progress(document),
            )
        _progress(document, stage=DocumentStage.CHUNK, progress=STAGE_PROGRESS[DocumentStage.PARSE])
        from exograph.graphs.embeddings import token_counter

        chunks = chunk_blocks(
            document_id=str(document.id),
            blocks=parsed.blocks,
            max_tokens=settings.DOCUMENTS_CHUNK_TOKENS,
            overlap_tokens=settings.DOCUMENTS_CHUNK_OVERLAP,
            count_tokens=token_counter(),
        )
        with transaction.atomic():
            DocumentChunk.objects.filter(document=document).delete()
            if blob.extraction is not None:  # an extraction of earlier chunks (a re-parse)
                DocumentBlob.objects.filter(document=document).update(extraction=None)
            DocumentChunk.objects.bulk_create(
                DocumentChunk(
                    id=c.id, document=document, ordinal=c.ordinal, page=c.page, heading=c.heading, text=c.text
                )
                for c in chunks
            )
            document.stage, document.progress, document.warnings = (
                DocumentStage.CHUNK,
                STAGE_PROGRESS[DocumentStage.CHUNK],
                [],
            )
            Document.objects.filter(pk=document.pk).update(
                chunk_count=len(chunks),
                warnings=[],
                text_engine=parsed.engine or content_type.value,
                ocr_pages=parsed.ocr_pages,
                stage=document.stage,
                progress=document.progress,
            )
        document_event_send(document)

    return _stage(document_id, DocumentStage.PARSE, work, last_attempt=last_attempt, queue_next=queue_next)


def document_stage_embed(
    *, document_id: str, last_attempt: bool = True, queue_next: bool = False, extraction: Extraction | None = None
) -> bool:
    """Stage 2: embed the chunks that have no vector yet, in batches (progress after each batch), and extract
    entities and relations beside it. extraction: the chunks' extraction, already made (the batch ingest makes a
    group's beside its chunk embedding); else it is made here."""
    from exograph.graphs.embeddings import chunk_embedding_text, get_embedder

    def work(document: Document) -> None:
        rows = list(DocumentChunk.objects.filter(document=document).order_by("ordinal"))
        pending = [row for row in rows if row.embedding is None]

        def embed() -> bool:
            """The pending chunks' vectors, a batch at a time; False if the document was cancelled mid-way."""
            embedder = get_embedder()
            total = max(1, len(rows))
            done = total - len(pending)
            batch = settings.DOCUMENTS_EMBED_BATCH
            start, span = (
                STAGE_PROGRESS[DocumentStage.CHUNK],
                STAGE_PROGRESS[DocumentStage.EMBED] - STAGE_PROGRESS[DocumentStage.CHUNK],
            )
            for offset in range(0, len(pending), batch):
                if not Document.objects.filter(pk=document.pk, status=DocumentStatus.PROCESSING).exists():
                    return False  # cancelled mid-way; _stage notices and stops
                part = pending[offset : offset + batch]
                vectors = embedder.embed([chunk_embedding_text(row.text, title=document.title) for row in part])
                for row, vector in zip(part, vectors, strict=True):
                    row.embedding = vector
                DocumentChunk.objects.bulk_update(part, ["embedding"])
                done += len(part)
                _progress(document, stage=DocumentStage.EMBED, progress=start + span * done // total)
            return True

        if extraction is not None:  # made already (the batch): nothing to run beside the embedding
            if not embed():
                return
            extracted = extraction
        else:
            chunks = [ChunkText(id=row.id, text=row.text) for row in rows]
            # Extraction (pure Python, holds the GIL) runs beside the embedding (torch releases the GIL while it
            # computes), so most of its time hides behind the embedder's. Its result waits on the blob row.
            with ThreadPoolExecutor(max_workers=1, thread_name_prefix="extract") as pool:
                extracting = pool.submit(document_extract, chunks)
                if not embed():
                    return
                extracted = extracting.result()
        DocumentBlob.objects.filter(document=document).update(extraction=extraction_to_json(extracted))
        if list(extracted.warnings) != list(document.warnings):
            Document.objects.filter(pk=document.pk).update(warnings=extracted.warnings)

    return _stage(document_id, DocumentStage.EMBED, work, last_attempt=last_attempt, queue_next=queue_next)


def _original_keep(document: Document) -> None:
    """A PDF's uploaded bytes outlive its stage data: the document viewer renders its pages (DocumentOriginal)."""
    if document.content_type != DocumentType.PDF:
        return
    data = DocumentBlob.objects.filter(document=document).values_list("data", flat=True).first()
    if data is not None:
        DocumentOriginal.objects.update_or_create(document=document, defaults={"data": bytes(data)})


def extraction_graph_inputs(extraction: Extraction) -> tuple[list[EntityIn], list[MentionIn], list[RelationIn]]:
    """An extraction as graph_document_write takes it (the index stage and the re-extraction backfill)."""
    from exograph.graphs.types import EntityIn, MentionIn, RelationIn

    return (
        [
            EntityIn(name=e.name, type=e.type, description=e.description, aliases=tuple(e.aliases))
            for e in extraction.entities
        ],
        [MentionIn(chunk_id=m.chunk_id, entity_name=m.name, entity_type=m.type) for m in extraction.mentions],
        [
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


def document_stage_index(*, document_id: str, last_attempt: bool = True, queue_next: bool = False) -> bool:
    """Stage 3: extract entities and relations, write the graph (and the world graph), mark processed."""
    from exograph.graphs.services import graph_document_write
    from exograph.graphs.types import ChunkIn

    def work(document: Document) -> None:
        rows = list(DocumentChunk.objects.filter(document=document).order_by("ordinal"))
        if any(row.embedding is None for row in rows):
            raise Conflict("Some chunks have no embedding yet.", hint="Retry the document.")
        saved = DocumentBlob.objects.filter(document=document).values_list("extraction", flat=True).first()
        if saved:
            extraction = extraction_from_json(saved)
        else:  # only then is there an extraction step to show
            _progress(document, stage=DocumentStage.EXTRACT, progress=STAGE_PROGRESS[DocumentStage.EMBED])
            extraction = document_extract(rows)
        document.stage, document.progress = DocumentStage.WRITE, STAGE_PROGRESS[DocumentStage.EXTRACT]
        if not Document.objects.filter(pk=document.pk, status=DocumentStatus.PROCESSING).update(
            stage=document.stage, progress=document.progress
        ):
            return  # cancelled (or failed) meanwhile
        document_event_send(document)
        _title_entity_add(extraction, title=document.title, chunk_ids=[r.id for r in rows])
        entities, mentions, relations = extraction_graph_inputs(extraction)
        graph_document_write(
            graph=document.graph,
            document_id=str(document.id),
            filename=document.filename,
            contributor=document.owner,
            provenance={
                "title": document.title,
                "source_url": document.source_url,
                "source_type": str(document.source_type),
                "published": document.published.isoformat() if document.published else "",
            },
            chunks=[
                ChunkIn(id=r.id, text=r.text, page=r.page, ordinal=r.ordinal, embedding=list(r.embedding or []))
                for r in rows
            ],
            entities=entities,
            mentions=mentions,
            relations=relations,
        )
        now = timezone.now()
        finished = {
            "status": DocumentStatus.PROCESSED,
            "stage": DocumentStage.DONE,
            "progress": 100,
            "entity_count": len(extraction.entities),
            "relation_count": len(extraction.relations),
            "warnings": extraction.warnings,
            "processed_at": now,
            "modified": now,
        }
        with transaction.atomic():
            done = Document.objects.filter(pk=document.pk, status=DocumentStatus.PROCESSING).update(**finished)
            if done:
                DocumentChunk.objects.filter(document=document).delete()
                _original_keep(document)
                DocumentBlob.objects.filter(document=document).delete()
        if not done:
            return  # cancelled, deleted or gone with its graph while the graph was written; _stage cleans up
        for field, value in finished.items():  # what the update wrote, without reading the row back
            setattr(document, field, value)
        document_event_send(document)
        logger.info("document %s processed", document.id)

    return _stage(document_id, DocumentStage.EXTRACT, work, last_attempt=last_attempt, queue_next=queue_next)
