"""WebSocket /ws/events/: the signed-in user's typed live events (document and research progress, chat streaming)."""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import parse_qs

import redis
import redis.asyncio as aioredis
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings

from exograph.core.events import EVENT_ID, event_id_key, user_events_group, user_events_stream

logger = logging.getLogger(__name__)


class EventsConsumer(AsyncJsonWebsocketConsumer):  # type: ignore[misc]
    """One socket per page, authenticated by the login session (close code 4401 otherwise).

    Each group message type maps to a handler (Channels turns `document.progress` into `document_progress`);
    a feature adds its event by adding a handler that forwards `{"type": ..., ...}` to the browser. Every event
    goes out with its `id`; a page reconnecting with `?last_event_id=<id>` first gets what it missed
    (exograph.core.events)."""

    last_sent: tuple[int, int] | None = None

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not getattr(user, "is_authenticated", False):
            await self.close(code=4401)
            return
        self.user_id = int(user.pk)
        self.group = user_events_group(self.user_id)
        # Join first, then replay: an event sent in between comes both ways and goes out once (last_sent).
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        since = _last_event_id(self.scope.get("query_string", b""))
        if since is not None:
            await self._replay(since)

    async def _replay(self, since: str) -> None:
        """Send the account's kept events after `since`, in order, then say whether that was all of them."""
        client = aioredis.Redis.from_url(settings.EVENTS_REDIS_URL, socket_timeout=2, socket_connect_timeout=2)
        try:
            # One more than the events after `since`: the entry `since` itself proves nothing was dropped.
            found = await client.xrange(user_events_stream(self.user_id), min=since, max="+")
        except redis.RedisError:
            logger.warning("could not replay events of user %s", self.user_id, exc_info=True)
            await self.send_json({"type": "events.replayed", "count": 0, "complete": False})
            return
        finally:
            await client.aclose()
        entries: list[tuple[Any, Any]] = list(found or [])
        complete = bool(entries) and _decode(entries[0][0]) == since
        count = 0
        for raw_id, fields in entries:
            event_id = _decode(raw_id)
            if event_id == since:
                continue
            event = json.loads(fields[b"event"])
            await self._forward({**event, "event_id": event_id})
            count += 1
        await self.send_json({"type": "events.replayed", "count": count, "complete": complete})

    async def _forward(self, event: dict[str, Any], message: dict[str, Any] | None = None) -> None:
        """Send `message` (default: the event itself) with the event's id, once (a replayed id is not resent)."""
        event_id = event.get("event_id")
        out = dict(event if message is None else message)
        out.pop("event_id", None)
        if isinstance(event_id, str) and EVENT_ID.match(event_id):
            key = event_id_key(event_id)
            if self.last_sent is not None and key <= self.last_sent:
                return
            self.last_sent = key
            out["id"] = event_id
        await self.send_json(out)

    async def disconnect(self, code: int) -> None:
        if getattr(self, "group", None):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        """Clients only listen; a ping gets a pong so they can check the line."""
        if isinstance(content, dict) and content.get("type") == "ping":
            await self.send_json({"type": "pong"})

    async def document_progress(self, event: dict[str, Any]) -> None:
        await self._forward(event, {"type": "document.progress", "document": event["document"]})

    async def research_progress(self, event: dict[str, Any]) -> None:
        await self._forward(event, {"type": "research.progress", "research": event["research"]})

    # Chat (exograph.chat.events): the answer streaming for one of the user's sessions.
    async def chat_status(self, event: dict[str, Any]) -> None:
        await self._forward(event)

    async def chat_token(self, event: dict[str, Any]) -> None:
        await self._forward(event)

    async def chat_done(self, event: dict[str, Any]) -> None:
        await self._forward(event)

    async def chat_error(self, event: dict[str, Any]) -> None:
        await self._forward(event)


def _decode(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _last_event_id(query_string: bytes) -> str | None:
    """The `last_event_id` query parameter when it is an event id; anything else is ignored (a fresh page)."""
    values = parse_qs(query_string.decode("latin-1")).get("last_event_id") or []
    value = values[0] if values else ""
    return value if EVENT_ID.match(value) else None
