"""WebSocket /ws/documents/: kept for existing clients; the same consumer as /ws/events/ (all typed events)."""

from __future__ import annotations

from exograph.core.consumers import EventsConsumer


class DocumentProgressConsumer(EventsConsumer):
    pass
