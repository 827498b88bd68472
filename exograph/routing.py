"""WebSocket routes (Channels). Apps add their consumers here."""

from __future__ import annotations

from django.urls import URLPattern, path

from exograph.core.consumers import EventsConsumer
from exograph.documents.consumers import DocumentProgressConsumer

websocket_urlpatterns: list[URLPattern] = [
    path("ws/events/", EventsConsumer.as_asgi()),
    path("ws/documents/", DocumentProgressConsumer.as_asgi()),
]
