"""Ingest pipeline tasks: ids only, idempotent, acks_late, on the ingest queue. Thin wrappers over services."""

from __future__ import annotations

from celery import shared_task

from exograph.core.queues import Queue


@shared_task(name="documents.document_parse", queue=Queue.INGEST.value, acks_late=True)
def document_parse_task(document_id: str) -> None:
    from exograph.documents.services import document_stage_parse

    if document_stage_parse(document_id=document_id):
        document_embed_task.delay(document_id)


@shared_task(name="documents.document_embed", queue=Queue.INGEST.value, acks_late=True)
def document_embed_task(document_id: str) -> None:
    from exograph.documents.services import document_stage_embed

    if document_stage_embed(document_id=document_id):
        document_index_task.delay(document_id)


@shared_task(name="documents.document_index", queue=Queue.INGEST.value, acks_late=True)
def document_index_task(document_id: str) -> None:
    from exograph.documents.services import document_stage_index

    document_stage_index(document_id=document_id)
