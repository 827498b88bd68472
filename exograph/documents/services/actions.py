"""User actions on a document: cancel, retry, delete; and the refund of one removed before processing."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from exograph.accounts.models import User
from exograph.core.errors import Conflict
from exograph.documents.events import document_event_send
from exograph.documents.models import (
    ACTIVE_STATUSES,
    Document,
    DocumentBlob,
    DocumentChunk,
    DocumentOriginal,
    DocumentStage,
    DocumentStatus,
)
from exograph.documents.selectors import document_get_for_user
from exograph.documents.services.state import (
    UPLOAD_ACTION,
    _cleanup,
    _document_resume,
    _pipeline_due,
    _pipeline_start,
    _refund,
)

if TYPE_CHECKING:
    from billing.services import Quote, Spent

logger = logging.getLogger(__name__)


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


def _retry_refusal(document: Document) -> Conflict | None:
    """Why a document that no worker may be running cannot be retried (the retry and its quote answer the same)."""
    if document.status not in (DocumentStatus.FAILED, DocumentStatus.CANCELLED):
        return Conflict(
            f"The document is {document.status} and a worker is running its stage now; only failed or cancelled "
            "documents, or pending or processing ones no worker is running, can be retried.",
            code="document_not_retryable",
            hint="Check its status with GET /api/v1/documents/{id}/; if the worker running its stage stops, the stage "
            f"is resumed by itself within {int(settings.LEASE_TTL_SECONDS + settings.LEASE_SWEEP_SECONDS)} s.",
        )
    if not DocumentBlob.objects.filter(document=document).exists():
        return Conflict("The uploaded file is no longer stored.", code="document_file_gone", hint="Upload it again.")
    return None


def document_retry_quote(*, actor: User, document_id: object) -> Quote:
    """What document_retry would decide about money, without doing it: nothing for a document still paid for
    (a pending or processing one is resumed for free), else the upload price, with billing's decision on the
    balance and the API key's cap. Raises NotFound, and the retry's Conflict for a document it would refuse
    (processed, or its file gone)."""
    from billing.services import credits_quote, credits_quote_amount

    document = document_get_for_user(user=actor, document_id=document_id)
    if document.status not in ACTIVE_STATUSES:
        refusal = _retry_refusal(document)
        if refusal is not None:
            raise refusal
    if document.refunded or not document.charge_key:
        return credits_quote(account=actor, action=UPLOAD_ACTION, units=document.pages)
    return credits_quote_amount(account=actor, cost=0)


def document_retry(*, actor: User, document_id: object, idempotency_key: str) -> tuple[Document, Spent]:
    """Run a failed or cancelled document's pipeline again, or resume a pending or processing one that no live
    worker runs (its stage was interrupted, or its message lost or still waiting; nothing is charged then). It is
    never paid twice: a failure refunded the charge, so the retry charges once more under `idempotency_key` (the
    document is paid exactly once when it succeeds), in the transaction that queues it.
    Returns (document, what this request spent). Raises NotFound, Conflict (not failed/cancelled), 402, 403."""
    from billing.services import Spent, credit_balance, credits_charge

    document = document_get_for_user(user=actor, document_id=document_id)
    if document.status in ACTIVE_STATUSES:
        # Pending or processing with no live runner on it (its stage was interrupted, its message lost or still
        # waiting): queue its stage again now. It is still paid by its charge, so nothing is charged.
        if _document_resume(document, stuck_only=False) in ("resumed", "skipped"):
            document.refresh_from_db()
            logger.info("document %s: stage resumed on retry", document.pk)
            return document, Spent(0, balance=credit_balance(account=actor))
        document.refresh_from_db()
    refusal = _retry_refusal(document)
    if refusal is not None:
        raise refusal
    charge = None
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
            charge = credits_charge(
                account=actor,
                action=UPLOAD_ACTION,
                units=locked.pages,
                idempotency_key=idempotency_key,
                reference=f"document {locked.id} retry {locked.attempts + 1}",
            )
            fields["charge_key"] = idempotency_key
            fields["refunded"] = False
        Document.objects.filter(pk=locked.pk).update(**fields)
        token = _pipeline_due(str(document.id))  # recorded as due with the retry: a lost message is sent by the sweep
        transaction.on_commit(lambda: _pipeline_start(str(document.id), token))
    document.refresh_from_db()
    document_event_send(document)
    if charge is None:
        return document, Spent(0, balance=credit_balance(account=actor))
    return document, Spent(charge.credits_charged, balance=charge.balance)


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
    DocumentOriginal.objects.filter(document=document).delete()
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
