"""Live events: one Channels group per account, carried to the browser by the /ws/events/ socket.

Apps send typed events (`{"type": "document.progress", ...}`) with `user_event_send(user_id, event)`, from
`transaction.on_commit`, so a client never sees uncommitted state. Types: `document.progress`
(exograph.documents.events); `research.progress` (research.events); `chat.status`, `chat.token`, `chat.done`,
`chat.error` (exograph.chat.events).

Every event gets an `id`, increasing per account (a Redis stream entry id, `<ms>-<n>`), and is kept for a
reconnecting page in a short per-account stream (the last EVENTS_REPLAY_MAX events, EVENTS_REPLAY_SECONDS after
the newest). A page that reconnects with `?last_event_id=<id>` first gets the events after that id, in order,
then `{"type": "events.replayed", "count": n, "complete": bool}`; `complete: false` means some were already
dropped and the page should catch up from REST (exograph.js does both).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import redis
from django.conf import settings

# A stream entry id as Redis writes them (`<ms>-<seq>`); anything else a client sends is ignored.
EVENT_ID = re.compile(r"^\d{1,20}-\d{1,20}$")

_clients: dict[str, redis.Redis] = {}


def user_events_group(user_id: int) -> str:
    """The Channels group of one account's live events (every feature shares it)."""
    return f"events.user.{int(user_id)}"


def user_events_stream(user_id: int) -> str:
    """The Redis stream keeping one account's recent events for replay."""
    return f"exo:events:user:{int(user_id)}"


def events_redis() -> redis.Redis:
    """A client of the replay streams' Redis (the channel layer's database), short timeouts: a send is best effort."""
    url = settings.EVENTS_REDIS_URL
    client = _clients.get(url)
    if client is None:
        client = _clients[url] = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
    return client


def user_event_send(user_id: int, event: dict[str, Any]) -> str:
    """Record `event` in the account's replay stream, then send it (with its `event_id`) to the account's group.

    Returns the event's id. Raises what Redis or the channel layer raise: callers treat live events as best effort.
    """
    return user_events_send(user_id, [event])[0]


def user_events_send(user_id: int, events: Sequence[dict[str, Any]]) -> list[str]:
    """Several events of one account, in order, as user_event_send sends one, for the price of one: one Redis
    round trip records them all and one event loop sends them (async_to_sync starts a loop, and channels_redis
    connects, per call: ~3 ms an event when ingest pushed each alone, issue 29). Returns their ids."""
    from asgiref.sync import async_to_sync
    from channels.layers import get_channel_layer

    if not events:
        return []
    stream = user_events_stream(user_id)
    pipe = events_redis().pipeline(transaction=True)
    for event in events:
        pipe.xadd(stream, {"event": json.dumps(event)}, maxlen=int(settings.EVENTS_REPLAY_MAX), approximate=False)
    pipe.expire(stream, int(settings.EVENTS_REPLAY_SECONDS))
    ids = [raw.decode() if isinstance(raw, bytes) else str(raw) for raw in pipe.execute()[: len(events)]]
    layer = get_channel_layer()
    if layer is not None:
        group = user_events_group(user_id)

        async def send_all() -> None:
            for event, event_id in zip(events, ids, strict=True):
                await layer.group_send(group, {**event, "event_id": event_id})

        async_to_sync(send_all)()
    return ids


def event_id_key(event_id: str) -> tuple[int, int]:
    """An event id as a comparable pair (ids of one account increase)."""
    ms, _, seq = event_id.partition("-")
    return int(ms), int(seq)
