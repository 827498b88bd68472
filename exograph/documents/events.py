"""Live progress: each change of a document is pushed to its owner's Channels group after commit."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from django.db import transaction

from exograph.core.events import user_event_send, user_events_group

if TYPE_CHECKING:
    from exograph.documents.models import Document

logger = logging.getLogger(__name__)


def user_group(user_id: int) -> str:
    """The Channels group of one account's document events: its events group (/ws/events/)."""
    return user_events_group(user_id)


def document_event_send(document: Document) -> None:
    """Send the document's state to its owner once the current transaction commits (best effort)."""
    from exograph.documents.serializers import document_progress

    payload = document_progress(document)
    owner_id = int(document.owner_id)

    def send() -> None:
        try:
            user_event_send(owner_id, {"type": "document.progress", "document": payload})
        except Exception:  # progress is a courtesy; the pipeline must not fail on it
            logger.warning("could not push progress of document %s", payload["id"], exc_info=True)

    transaction.on_commit(send)
