"""Ingest pipeline tasks: ids only, idempotent, acks_late, on the ingest queue. Thin wrappers over services.

Services never import this module (they start the pipeline, and each stage the next one, by task name:
`PARSE_TASK`, `EMBED_TASK`, `INDEX_TASK`), so the imports run one way: tasks → services. A stage records
the next one as due (its lease) before it sends its message, so a message that never went out is sent by
the lease sweep.

A stage that meets a TransientError (FalkorDB, an embedding or LLM provider down) raises it while
attempts remain, and Celery retries the task with exponential backoff (`retry_backoff`: 2, 4, 8, … seconds,
capped at RETRY_BACKOFF_MAX) up to MAX_RETRIES times, so a store or provider that is back within two minutes
loses no document; on the last attempt the stage fails the
document and refunds it. A PermanentError is never retried: the stage fails the document at once.
"""

from __future__ import annotations

from typing import Any

from celery import shared_task

from exograph.core.errors import TransientError
from exograph.core.queues import Queue
from exograph.documents.services import (
    BATCH_TASK,
    EMBED_TASK,
    INDEX_TASK,
    PARSE_TASK,
    RETRY_BACKOFF_MAX,
    document_stage_embed,
    document_stage_index,
    document_stage_parse,
    documents_batch_process,
)

MAX_RETRIES = 6
RETRY_BACKOFF = 2  # seconds before the first retry; doubled each time: 2+4+8+16+32+64 = 126 s of outage survived

RETRYING: dict[str, Any] = {
    "bind": True,
    "queue": Queue.INGEST.value,
    "acks_late": True,
    "autoretry_for": (TransientError,),
    "retry_backoff": RETRY_BACKOFF,
    "retry_backoff_max": RETRY_BACKOFF_MAX,
    # No full jitter: Celery's draws each wait from [0, backoff], so six retries could all fall within a few
    # seconds and fail a document while a restarted FalkorDB is still loading (stages start at different times,
    # so their retries do not fall in step anyway).
    "retry_jitter": False,
    "max_retries": MAX_RETRIES,
}


def _last_attempt(task: Any) -> bool:
    return bool(task.request.retries >= task.max_retries)


@shared_task(name=PARSE_TASK, **RETRYING)
def document_parse_task(self: Any, document_id: str) -> None:
    document_stage_parse(document_id=document_id, last_attempt=_last_attempt(self), queue_next=True)


@shared_task(name=EMBED_TASK, **RETRYING)
def document_embed_task(self: Any, document_id: str) -> None:
    document_stage_embed(document_id=document_id, last_attempt=_last_attempt(self), queue_next=True)


@shared_task(name=INDEX_TASK, **RETRYING)
def document_index_task(self: Any, document_id: str) -> None:
    document_stage_index(document_id=document_id, last_attempt=_last_attempt(self), queue_next=True)


@shared_task(name=BATCH_TASK, **RETRYING)
def document_batch_task(self: Any, document_ids: list[str]) -> None:
    documents_batch_process(document_ids=document_ids, last_attempt=_last_attempt(self))
