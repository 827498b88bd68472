"""Live events: one Channels group per account, carried to the browser by the /ws/events/ socket.

Apps send typed events (`{"type": "document.progress", ...}`) to `user_events_group(user_id)` from
`transaction.on_commit`, so a client never sees uncommitted state. Types: `document.progress`
(exograph.documents.events); `chat.status`, `chat.token`, `chat.done`, `chat.error` (exograph.chat.events).
"""

from __future__ import annotations


def user_events_group(user_id: int) -> str:
    """The Channels group of one account's live events (every feature shares it)."""
    return f"events.user.{int(user_id)}"
