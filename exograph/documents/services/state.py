"""Shared pipeline state: prices, progress, the pipeline start, failure (cleanup and refund)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.utils import timezone

from exograph.celery import app as celery_app
from exograph.core.errors import NotFound
from exograph.core.leases import LeaseKind, lease_kind_register
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

# charge(units, reference) -> the ledger idempotency key used. The REST view passes the billing Meter's.
Charger = Callable[[int, str], str]


def _price(pages: int) -> int:
    from billing.prices import price_for

    return price_for(UPLOAD_ACTION, pages)


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


lease_kind_register(LeaseKind(name=DOCUMENT_LEASE, active=_lease_active, resume=_lease_resume, give_up=_lease_give_up))
