"""Shared pipeline state: prices, progress, the pipeline start, failure (cleanup and refund)."""

from __future__ import annotations

import logging
import uuid
from datetime import datetime

from django.utils import timezone

from exograph.celery import app as celery_app
from exograph.core.errors import NotFound
from exograph.core.leases import (
    LeaseKind,
    lease_due,
    lease_expired,
    lease_kind_register,
    lease_queued,
    lease_resume_now,
)
from exograph.core.models import Lease
from exograph.core.queues import Queue
from exograph.documents.events import document_event_send
from exograph.documents.models import (
    Document,
    DocumentChunk,
    DocumentStage,
    DocumentStatus,
)

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

# The lease kind of a document's running stage (exograph/core/leases.py); its step is the stage's task name.
DOCUMENT_LEASE = "document.stage"
RETRY_BACKOFF_MAX = 300  # seconds: the longest a stage waits for its Celery retry (the tasks' retry_backoff_max)
STAGE_TASKS = {DocumentStage.PARSE: PARSE_TASK, DocumentStage.EMBED: EMBED_TASK, DocumentStage.EXTRACT: INDEX_TASK}
_TASK_STAGES = {task: stage for stage, task in STAGE_TASKS.items()}


def _price(pages: int) -> int:
    from billing.prices import price_for

    return price_for(UPLOAD_ACTION, pages)


def _pipeline_due(document_id: str) -> uuid.UUID:
    """Record the document's first stage as due (call it in the transaction that makes it pending): if the message
    that starts it is never sent (the web process died after the commit), the lease sweep starts it."""
    return lease_due(kind=DOCUMENT_LEASE, subject_id=document_id, step=PARSE_TASK)


def _pipeline_start(document_id: str, token: uuid.UUID | None = None) -> None:
    """Send the first stage's message (on commit, after _pipeline_due)."""
    try:
        celery_app.signature(PARSE_TASK, args=(document_id,), queue=Queue.INGEST.value).delay()
    except Exception:  # the broker is down: say so on the document and give the credits back
        logger.exception("could not queue document %s", document_id)
        document = Document.objects.select_related("graph", "owner").filter(pk=document_id).first()
        if document is not None:
            _fail(document, stage=DocumentStage.QUEUED, reason="The ingest queue is unavailable. Retry the document.")
        return
    lease_queued(kind=DOCUMENT_LEASE, subject_id=document_id, token=token)


def _stage_queue(document_id: str, task: str, token: uuid.UUID | None) -> None:
    """Send the next stage's message (its lease was handed off to it first). A broker that is down leaves that
    lease due: the sweep sends the stage once the broker is back, so nothing is failed for it."""
    try:
        celery_app.signature(task, args=(document_id,), queue=Queue.INGEST.value).delay()
    except Exception as exc:
        logger.warning(
            "document %s: could not queue %s (%s); the lease sweep resumes it", document_id, task, type(exc).__name__
        )
        return
    lease_queued(kind=DOCUMENT_LEASE, subject_id=document_id, token=token)


# --- progress and state -------------------------------------------------------------------------


def _progress(document: Document, *, stage: str, progress: int) -> None:
    document.stage = stage
    document.progress = max(0, min(100, progress))
    Document.objects.filter(pk=document.pk).update(stage=document.stage, progress=document.progress)
    document_event_send(document)


def _running(document_id: str, *, related: bool = True) -> Document | None:
    """The document if the pipeline should go on (not cancelled, failed, deleted or already done). related: with its
    graph and owner read in the same query (else each is read when first used: a failure's cleanup and refund)."""
    documents = Document.objects.select_related("graph", "owner") if related else Document.objects
    document = documents.filter(pk=document_id).first()
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


# --- interrupted stages (the document lease) -------------------------------------------------------


def _lease_active(document_id: str) -> bool:
    return _running(document_id) is not None


def _lease_resume(lease: Lease) -> None:
    """Queue the interrupted stage again (stages are idempotent; embed keeps the vectors it had)."""
    task = lease.step if lease.step in _TASK_STAGES else PARSE_TASK
    celery_app.signature(task, args=(lease.subject_id,), queue=Queue.INGEST.value).delay()


def _lease_give_up(lease: Lease, reason: str) -> None:
    document = Document.objects.select_related("graph", "owner").filter(pk=lease.subject_id).first()
    if document is None:
        return
    stage = _TASK_STAGES.get(lease.step, DocumentStage(document.stage))
    _fail(document, stage=stage, reason=f"{reason} The credits were refunded; retry the document to try again.")


def _lease_orphans(cutoff: datetime) -> list[tuple[str, str]]:
    """Pending or processing documents with no lease, unchanged since cutoff (left by a version without leases, or
    a lease lost some other way): (id, the task of their stage) for the sweep to resume."""
    from exograph.documents.services.stages import _stage_task

    candidates = {
        str(pk): stage
        for pk, stage in Document.objects.filter(
            status__in=[DocumentStatus.PENDING, DocumentStatus.PROCESSING], deleted_at__isnull=True, modified__lt=cutoff
        ).values_list("pk", "stage")[:500]
    }
    leased = set(
        Lease.objects.filter(kind=DOCUMENT_LEASE, subject_id__in=list(candidates)).values_list("subject_id", flat=True)
    )
    return [(pk, _stage_task(stage)) for pk, stage in candidates.items() if pk not in leased]


def _document_resume(document: Document, *, stuck_only: bool) -> str:
    """Resume a pending or processing document now (a user retried or uploaded it again); nothing is charged.

    stuck_only: only when nothing else will (its lease is missing or expired); else whenever no live runner holds
    it. Returns lease_resume_now's outcome, or 'live' when it was left alone."""
    from exograph.documents.services.stages import _stage_task

    pk = str(document.pk)
    if stuck_only and Lease.objects.filter(kind=DOCUMENT_LEASE, subject_id=pk).exists():
        if not lease_expired(kind=DOCUMENT_LEASE, subject_id=pk):
            return "live"
    outcome = lease_resume_now(kind=DOCUMENT_LEASE, subject_id=pk, step=_stage_task(document.stage))
    if outcome == "resumed":
        logger.info("document %s resumed at %s at its owner's request", pk, document.stage)
    return outcome


lease_kind_register(
    LeaseKind(
        name=DOCUMENT_LEASE,
        active=_lease_active,
        resume=_lease_resume,
        give_up=_lease_give_up,
        orphans=_lease_orphans,
    )
)
