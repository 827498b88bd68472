"""Ingest pipeline tasks: ids only, idempotent, acks_late, on the ingest queue. Thin wrappers over services.

Services never import this module (they start the pipeline by task name, `PARSE_TASK`), so the
imports run one way: tasks → services.
"""

from __future__ import annotations

from celery import shared_task

from exograph.core.queues import Queue
from exograph.documents.services import (
    EMBED_TASK,
    INDEX_TASK,
    PARSE_TASK,
    document_stage_embed,
    document_stage_index,
    document_stage_parse,
)


@shared_task(name=PARSE_TASK, queue=Queue.INGEST.value, acks_late=True)
def document_parse_task(document_id: str) -> None:
    if document_stage_parse(document_id=document_id):
        document_embed_task.delay(document_id)


@shared_task(name=EMBED_TASK, queue=Queue.INGEST.value, acks_late=True)
def document_embed_task(document_id: str) -> None:
    if document_stage_embed(document_id=document_id):
        document_index_task.delay(document_id)


@shared_task(name=INDEX_TASK, queue=Queue.INGEST.value, acks_late=True)
def document_index_task(document_id: str) -> None:
    document_stage_index(document_id=document_id)
