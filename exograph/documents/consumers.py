"""WebSocket /ws/documents/: the signed-in user's document progress events."""

from __future__ import annotations

from typing import Any

from channels.generic.websocket import AsyncJsonWebsocketConsumer

from exograph.documents.events import user_group


class DocumentProgressConsumer(AsyncJsonWebsocketConsumer):  # type: ignore[misc]
    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not getattr(user, "is_authenticated", False):
            await self.close(code=4401)
            return
        self.group = user_group(int(user.pk))
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()

    async def disconnect(self, code: int) -> None:
        if getattr(self, "group", None):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def document_progress(self, event: dict[str, Any]) -> None:
        await self.send_json({"type": "document.progress", "document": event["document"]})
