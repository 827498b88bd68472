"""Live progress: each change of a research session is pushed to its owner's events socket after commit."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from django.db import transaction

from exograph.core.events import user_event_send

if TYPE_CHECKING:
    from research.models import ResearchSession

logger = logging.getLogger(__name__)

EVENT_TYPE = "research.progress"


def research_event_send(session: ResearchSession) -> None:
    """Send the session's status and progress (no report, no topic text) once the transaction commits."""
    from research.serializers import research_progress_event

    payload = research_progress_event(session)
    owner_id = int(session.owner_id)

    def send() -> None:
        try:
            user_event_send(owner_id, {"type": EVENT_TYPE, "research": payload})
        except Exception:  # progress is a courtesy; the pipeline must not fail on it
            logger.warning("could not push progress of research session %s", payload["id"], exc_info=True)

    transaction.on_commit(send)
