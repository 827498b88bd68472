"""Batch text ingest: many plain-text documents into one graph, through the one-document stage code.

What a batch saves is the per-call cost of the embedder, never a stage: every text becomes its own
Document (validated, deduplicated by sha256, charged 5 + 1 per 3,000 characters under its own
idempotency key, progress and events per document, refunded on failure), and each runs the same
`document_stage_parse` → `document_stage_embed` → `document_stage_index` as an upload. The group
step in between only front-loads work those stages would do one document at a time: the chunks of
a whole group are embedded in one call (the embed stage then finds them embedded and only
extracts), and its entity texts a few hundred a call into the cache graph writes read, both on an
embedder thread beside the stages (batch_embed.py).

Research and the retrieval benchmark write corpora through `document_texts_ingest`; the pipeline
runs as one Celery task per group (`BATCH_TASK`, on the ingest queue), retried as a whole on a
transient error: the stages are idempotent and skip documents already processed.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import date

from django.db import transaction

from exograph.accounts.models import User
from exograph.core.errors import ExoGraphError, InsufficientCredits, TransientError, ValidationError
from exograph.core.leases import leases_queued
from exograph.core.queues import Queue
from exograph.core.scope import Scope
from exograph.documents.events import document_events_coalesced, document_events_flush
from exograph.documents.extraction import document_extract, extraction_read_ahead
from exograph.documents.extraction.types import Extraction
from exograph.documents.models import Document, DocumentChunk, DocumentStage, DocumentStatus, SourceType
from exograph.documents.services.batch_embed import (
    EmbedderThread,
    NamesAhead,
    chunk_vectors,
    embedder_thread,
    entities_embed,
)
from exograph.documents.services.stages import (
    ChunkText,
    _stage_task,
    document_stage_embed,
    document_stage_index,
    document_stage_parse,
    documents_retry_park,
)
from exograph.documents.services.state import (
    DOCUMENT_LEASE,
    EMBED_TASK,
    INDEX_TASK,
    PARSE_TASK,
    UPLOAD_ACTION,
    _fail,
    _pipeline_due,
    _price,
)
from exograph.documents.services.text import TEXT_SOURCE_TYPES, text_upload_build
from exograph.documents.services.upload import document_create, document_upload_prepare
from exograph.graphs.models import Graph

logger = logging.getLogger(__name__)

BATCH_TASK = "documents.document_batch_process"
MAX_BATCH = 5_000  # texts per call
GROUP = 64  # documents per pipeline task
FLUSH_EVERY = 8  # documents indexed between two sends of the group's coalesced progress events


@dataclass(frozen=True)
class TextIn:
    """One text of a batch: what document_text_ingest takes for one document."""

    title: str
    text: str
    idempotency_key: str
    source_url: str | None = None
    published: date | None = None


def document_texts_ingest(
    *,
    actor: User,
    graph: Graph,
    texts: Sequence[TextIn],
    source_type: str = SourceType.ARTICLE,
    markdown: bool = False,
    group: int = GROUP,
) -> list[tuple[Document, bool]]:
    """Ingest many texts into `graph`, each as its own document, and queue the pipeline per group of
    `group` documents on commit. Returns (document, created) per text, in order; a duplicate (same text
    already in the graph, or earlier in the batch) is returned unchanged and free.

    Every text is validated and the whole price checked against the balance before anything is written,
    so bad input or too few credits leave nothing behind. Raises ValidationError / PayloadTooLarge (naming
    the text's position), PermissionDenied / NotFound (graph), InsufficientCredits (402)."""
    from billing.services import credit_balance

    if source_type not in TEXT_SOURCE_TYPES:
        raise ValidationError(f"source_type must be one of {', '.join(TEXT_SOURCE_TYPES)}.", code="invalid_source_type")
    if not texts or len(texts) > MAX_BATCH:
        raise ValidationError(
            f"Send 1 to {MAX_BATCH} texts; got {len(texts)}.", code="invalid_batch", hint="Split the batch."
        )
    if not 1 <= group <= 500:
        raise ValidationError("group must be between 1 and 500.", code="invalid_group")
    prepared = []
    for position, item in enumerate(texts):
        if not item.idempotency_key:
            raise ValidationError(f"Text {position}: idempotency_key is required.", code="invalid_idempotency_key")
        try:
            upload = text_upload_build(text=item.text, title=item.title, source_url=item.source_url, markdown=markdown)
        except ExoGraphError as exc:
            exc.message = f"Text {position}: {exc.message}"
            raise
        prepared.append(
            document_upload_prepare(actor=actor, upload=upload, scope=Scope(graph.scope), graph_id=str(graph.id))
        )
    new_hashes: dict[str, int] = {}
    for p in prepared:
        if p.existing is None and p.sha256 not in new_hashes:
            new_hashes[p.sha256] = _price(p.inspection.pages)
    needed = sum(new_hashes.values())
    balance = credit_balance(account=actor)
    if needed > balance:
        raise InsufficientCredits(
            f"This batch needs {needed} credits ({UPLOAD_ACTION}); the balance is {balance}.",
            hint="Top up, or send fewer or shorter texts.",
            extra={"needed": needed, "balance": balance},
        )
    results: list[tuple[Document, bool]] = []
    created: list[str] = []
    by_hash: dict[str, Document] = {}
    tokens: dict[str, uuid.UUID] = {}
    with transaction.atomic():
        for item, p in zip(texts, prepared, strict=True):
            if p.existing is None and p.sha256 in by_hash:
                results.append((by_hash[p.sha256], False))  # the same text twice in one batch: one document
                continue
            document, was_created = document_create(
                actor=actor,
                prepared=p,
                idempotency_key=item.idempotency_key,
                source_type=source_type,
                published=item.published,
                queue=False,
            )
            by_hash[p.sha256] = document
            results.append((document, was_created))
            if was_created:
                created.append(str(document.id))
                tokens[str(document.id)] = _pipeline_due(str(document.id))  # a lost batch message: the sweep
        for start in range(0, len(created), group):
            ids = created[start : start + group]
            transaction.on_commit(lambda ids=ids: _batch_start(ids, tokens))  # type: ignore[misc]
    logger.info("batch of %d texts: %d documents created in graph %s", len(texts), len(created), graph.id)
    return results


def _batch_start(document_ids: list[str], tokens: dict[str, uuid.UUID]) -> None:
    from exograph.celery import app as celery_app

    try:
        celery_app.signature(BATCH_TASK, args=(document_ids,), queue=Queue.INGEST.value).delay()
    except Exception:  # the broker is down: say so on each document and give the credits back
        logger.exception("could not queue a batch of %d documents", len(document_ids))
        for document in Document.objects.select_related("graph", "owner").filter(pk__in=document_ids):
            _fail(document, stage=DocumentStage.QUEUED, reason="The ingest queue is unavailable. Retry the document.")
        return
    leases_queued(kind=DOCUMENT_LEASE, tokens={i: tokens[i] for i in document_ids if i in tokens})


def documents_batch_process(*, document_ids: Sequence[str], last_attempt: bool = True) -> int:
    """Run the pipeline for a group of documents: parse each, extract each while the group's chunks and then
    its entity texts are embedded on the embedder thread, run each embed stage (storing the vectors and the
    extraction), run each index stage as its document's entity texts are embedded.
    Returns how many of the group are processed. A TransientError is raised while attempts remain (the task
    retries the group and each document resumes at its stage); otherwise the stages record failures."""
    ids = list(dict.fromkeys(str(i) for i in document_ids))
    try:
        return _batch_process(ids, last_attempt=last_attempt)
    except TransientError:
        documents_retry_park(ids)  # the group waits for Celery's retry: a lost retry message is resumed anyway
        raise


def _batch_process(ids: list[str], *, last_attempt: bool) -> int:
    # Each stage moves every document of the group a few times: their events go out coalesced, after each step.
    # The embedder runs on a thread of its own (batch_embed.py): ONNX Runtime releases the GIL, so it computes on
    # the other core while this thread runs the stages, which hold it (issue 29 §5). Its jobs, in order: the
    # group's chunk texts in one call (as soon as the group is parsed), then the entity texts as the extraction
    # here makes them; the index stages start as soon as their documents' entity texts are embedded, while the
    # later documents' still are.
    at = _resume_points(ids)
    with document_events_coalesced(), embedder_thread() as thread:
        to_embed = [i for i in ids if at.get(i) == 1]
        for i in ids:
            if at.get(i) == 0 and document_stage_parse(document_id=i, last_attempt=last_attempt):
                to_embed.append(i)
        document_events_flush()
        documents = {str(d.pk): d for d in Document.objects.select_related("graph").filter(pk__in=to_embed)}
        chunks, rows = _chunk_rows(to_embed)
        vectors = _chunks_send(thread, rows, documents)
        names = NamesAhead(thread, documents)
        extractions = _extractions(chunks, names.add)
        names.send_rest()
        _chunks_write(rows, vectors, last_attempt=last_attempt)
        to_index = [i for i in ids if at.get(i) == 2]
        to_index += [
            i
            for i in to_embed
            if document_stage_embed(document_id=i, last_attempt=last_attempt, extraction=extractions.get(i))
        ]
        document_events_flush()
        # Resumed documents, and those whose extraction failed here (their embed stage made it).
        entities_embed(document_ids=[i for i in to_index if not names.covers(i)], last_attempt=last_attempt)
        for n, i in enumerate(to_index, start=1):
            names.wait(i, last_attempt=last_attempt)
            document_stage_index(document_id=i, last_attempt=last_attempt)
            if n % FLUSH_EVERY == 0:
                document_events_flush()
    return Document.objects.filter(pk__in=ids, status=DocumentStatus.PROCESSED).count()


def _chunk_rows(document_ids: list[str]) -> tuple[dict[str, list[ChunkText]], list[DocumentChunk]]:
    """Each document's chunks, in order, as extraction reads them; and the rows of those without a vector."""
    chunks: dict[str, list[ChunkText]] = {i: [] for i in document_ids}
    rows = []
    for row in DocumentChunk.objects.filter(document_id__in=document_ids).order_by("document_id", "ordinal"):
        chunks[str(row.document_id)].append(ChunkText(id=row.id, text=row.text))
        if row.embedding is None:
            rows.append(row)
    return chunks, rows


def _chunks_send(
    thread: EmbedderThread, rows: list[DocumentChunk], documents: dict[str, Document]
) -> Future[list[list[float]]] | None:
    """The group's chunk texts (under their documents' titles) to the embedder thread, in one call."""
    from exograph.graphs.embeddings import chunk_embedding_text

    if not rows:
        return None
    titles = {i: d.title for i, d in documents.items()}
    return thread.submit(
        chunk_vectors, [chunk_embedding_text(row.text, title=titles.get(str(row.document_id)) or "") for row in rows]
    )


def _chunks_write(rows: list[DocumentChunk], sent: Future[list[list[float]]] | None, *, last_attempt: bool) -> None:
    """The group's chunk vectors, made on the embedder thread, written to their rows. If the call failed nothing is
    written: a TransientError is raised while attempts remain (the group is retried, each document resuming at its
    stage); otherwise each embed stage embeds its own chunks and records the failure on its document."""
    if sent is None:
        return
    try:
        vectors = sent.result()
    except TransientError:
        if not last_attempt:
            raise
        return
    except Exception:
        logger.warning("chunk vectors of a batch group not made; each embed stage embeds its own", exc_info=True)
        return
    for row, vector in zip(rows, vectors, strict=True):
        row.embedding = vector
    DocumentChunk.objects.bulk_update(rows, ["embedding"], batch_size=500)


def _extractions(
    chunks: dict[str, list[ChunkText]], done: Callable[[str, Extraction], None] | None = None
) -> dict[str, Extraction]:
    """Each document's extraction (no I/O), the group's chunks read by the NER model in one pass; a document whose
    extraction fails is left out: its embed stage extracts it again and records the failure on it. `done` is
    called with each one as it is made."""
    found: dict[str, Extraction] = {}
    with extraction_read_ahead(chunks.values()):
        for document_id, texts in chunks.items():
            try:
                found[document_id] = document_extract(texts)
            except Exception:
                logger.warning("document %s: extraction in the batch failed", document_id, exc_info=True)
                continue
            if done is not None:
                done(document_id, found[document_id])
    return found


def _resume_points(ids: list[str]) -> dict[str, int]:
    """Where each unfinished document resumes: 0 parse, 1 embed, 2 index (absent: nothing to do)."""
    points: dict[str, int] = {}
    for pk, status, stage in Document.objects.filter(pk__in=ids, deleted_at__isnull=True).values_list(
        "pk", "status", "stage"
    ):
        if status == DocumentStatus.PENDING:
            points[str(pk)] = 0
        elif status == DocumentStatus.PROCESSING:
            points[str(pk)] = _RESUME_POINTS[_stage_task(stage)]
    return points


_RESUME_POINTS = {PARSE_TASK: 0, EMBED_TASK: 1, INDEX_TASK: 2}
