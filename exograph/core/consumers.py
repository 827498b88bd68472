"""WebSocket /ws/events/: the signed-in user's typed live events (document and research progress, chat streaming)."""

from __future__ import annotations

from typing import Any

from channels.generic.websocket import AsyncJsonWebsocketConsumer

from exograph.core.events import user_events_group


class EventsConsumer(AsyncJsonWebsocketConsumer):  # type: ignore[misc]
    """One socket per page, authenticated by the login session (close code 4401 otherwise).

    Each group message type maps to a handler (Channels turns `document.progress` into `document_progress`);
    a feature adds its event by adding a handler that forwards `{"type": ..., ...}` to the browser."""

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not getattr(user, "is_authenticated", False):
            await self.close(code=4401)
            return
        self.group = user_events_group(int(user.pk))
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()

    async def disconnect(self, code: int) -> None:
        if getattr(self, "group", None):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        """Clients only listen; a ping gets a pong so they can check the line."""
        if isinstance(content, dict) and content.get("type") == "ping":
            await self.send_json({"type": "pong"})

    async def document_progress(self, event: dict[str, Any]) -> None:
        await self.send_json({"type": "document.progress", "document": event["document"]})

    async def research_progress(self, event: dict[str, Any]) -> None:
        await self.send_json({"type": "research.progress", "research": event["research"]})

    # Chat (exograph.chat.events): the answer streaming for one of the user's sessions.
    async def chat_status(self, event: dict[str, Any]) -> None:
        await self.send_json(event)

    async def chat_token(self, event: dict[str, Any]) -> None:
        await self.send_json(event)

    async def chat_done(self, event: dict[str, Any]) -> None:
        await self.send_json(event)

    async def chat_error(self, event: dict[str, Any]) -> None:
        await self.send_json(event)
