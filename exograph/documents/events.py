"""Live progress: each change of a document is pushed to its owner's Channels group after commit.

A batch ingest (services/batch.py) runs a group's documents stage by stage, and each stage moves every document
several times: inside `document_events_coalesced()` a change is kept (once committed) instead of sent, only the
latest state of each document, and `document_events_flush()` sends what is kept in one call per owner
(core.events.user_events_send). Each document still reaches its final state on the socket and in the replay stream.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from django.db import transaction

from exograph.core.events import user_event_send, user_events_group, user_events_send

if TYPE_CHECKING:
    from exograph.documents.models import Document

logger = logging.getLogger(__name__)

EVENT_TYPE = "document.progress"

# This thread's coalescing buffer while a batch runs: document id -> (owner id, latest committed payload).
_local = threading.local()


def user_group(user_id: int) -> str:
    """The Channels group of one account's document events: its events group (/ws/events/)."""
    return user_events_group(user_id)


def document_event_send(document: Document) -> None:
    """Send the document's state to its owner once the current transaction commits (best effort); inside
    document_events_coalesced, keep it for the next flush instead (a later state of the same document replaces it)."""
    from exograph.documents.serializers import document_progress

    payload = document_progress(document)
    owner_id = int(document.owner_id)
    kept: dict[str, tuple[int, dict[str, Any]]] | None = getattr(_local, "kept", None)

    def send() -> None:
        if kept is not None and getattr(_local, "kept", None) is kept:
            kept.pop(str(payload["id"]), None)  # re-inserted last: the flush sends in the order of latest change
            kept[str(payload["id"])] = (owner_id, payload)
            return  # kept for the next flush (committed after the block ended, it is sent now, below)
        try:
            user_event_send(owner_id, {"type": EVENT_TYPE, "document": payload})
        except Exception:  # progress is a courtesy; the pipeline must not fail on it
            logger.warning("could not push progress of document %s", payload["id"], exc_info=True)

    transaction.on_commit(send)


def document_events_flush() -> None:
    """Send the kept latest state of each document changed since the last flush, one call per owner (best effort)."""
    kept: dict[str, tuple[int, dict[str, Any]]] | None = getattr(_local, "kept", None)
    if not kept:
        return
    by_owner: dict[int, list[dict[str, Any]]] = {}
    for owner_id, payload in kept.values():
        by_owner.setdefault(owner_id, []).append({"type": EVENT_TYPE, "document": payload})
    kept.clear()
    for owner_id, events in by_owner.items():
        try:
            user_events_send(owner_id, events)
        except Exception:  # progress is a courtesy; the pipeline must not fail on it
            logger.warning("could not push progress of %d documents of user %s", len(events), owner_id, exc_info=True)


@contextmanager
def document_events_coalesced() -> Iterator[None]:
    """Within the block (this thread), document events are coalesced per document and sent at each
    document_events_flush() and at the end of the block. Nested blocks share the outermost one's buffer."""
    if getattr(_local, "kept", None) is not None:
        yield
        return
    _local.kept = {}
    try:
        yield
    finally:
        try:
            document_events_flush()
        finally:
            _local.kept = None
