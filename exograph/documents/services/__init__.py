"""Document use cases (a package: upload, stages, actions, state): upload (validate → inspect → charge → queue), the ingest stages, cancel, retry, delete.

The pipeline is three Celery tasks (see tasks.py), each calling one stage here with the document id:
parse (+chunk) → embed → index (extract, write graph, world merge). Every stage is idempotent:
it rebuilds its own output, so a redelivered task (acks_late) or a retry just runs it again.
Between stages a cancelled or deleted document stops the pipeline. A transient failure (FalkorDB, an
embedding or LLM provider) is raised for the task to retry with backoff while attempts remain; any
other failure, or a transient one on the last attempt, marks the document `failed` with the stage
and reason, removes whatever reached the graph and refunds the charge. A document deleted (or gone
with its graph) before it was processed is refunded too.
"""

from __future__ import annotations

from exograph.documents.services.actions import (
    document_cancel,
    document_delete,
    document_refund_unprocessed,
    document_retry,
    document_retry_quote,
)
from exograph.documents.services.batch import (
    BATCH_TASK,
    TextIn,
    document_texts_ingest,
    documents_batch_process,
)
from exograph.documents.services.stages import (
    ChunkText,
    document_stage_embed,
    document_stage_index,
    document_stage_parse,
)
from exograph.documents.services.state import (
    EMBED_TASK,
    INDEX_TASK,
    PARSE_TASK,
    RETRY_BACKOFF_MAX,
    STAGE_PROGRESS,
    UPLOAD_ACTION,
)
from exograph.documents.services.text import document_text_ingest, text_upload_build
from exograph.documents.services.upload import (
    HoldPayment,
    PreparedUpload,
    UploadOutcome,
    document_create,
    document_upload,
    document_upload_prepare,
    document_upload_quote,
)

__all__ = [
    "BATCH_TASK",
    "EMBED_TASK",
    "INDEX_TASK",
    "PARSE_TASK",
    "RETRY_BACKOFF_MAX",
    "STAGE_PROGRESS",
    "UPLOAD_ACTION",
    "HoldPayment",
    "ChunkText",
    "TextIn",
    "PreparedUpload",
    "UploadOutcome",
    "document_cancel",
    "document_create",
    "document_delete",
    "document_refund_unprocessed",
    "document_retry",
    "document_retry_quote",
    "document_stage_embed",
    "document_stage_index",
    "document_stage_parse",
    "document_text_ingest",
    "document_texts_ingest",
    "documents_batch_process",
    "document_upload",
    "document_upload_prepare",
    "document_upload_quote",
    "text_upload_build",
]
