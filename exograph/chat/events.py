"""Live chat events on the owner's events socket (/ws/events/, exograph.core.events):

- `chat.status` {session_id, message_id, phase}: retrieving, generating, checking (ponder's second pass).
- `chat.token` {session_id, message_id, seq, text}: answer text as the provider streams it (sentences for
  extractive), in order (`seq` counts from 0). Pieces arriving within TOKEN_FLUSH_SECONDS of the previous
  send are coalesced into the next one, so a fast stream costs a few sends, not one per token.
- `chat.done` {session_id, message_id, title, message, grounded, support_score, balance}: sent after the turn
  is committed, so a page that catches up from REST finds the same message.
- `chat.error` {session_id, message_id, error: {code, message}}: the turn failed (and was refunded).

Tokens are not state: they go out as they arrive, never inside a transaction. Every send is best effort:
a channel layer that is down costs the live view, never the answer.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from django.db import transaction

from exograph.core.events import user_event_send

logger = logging.getLogger(__name__)

TOKEN_FLUSH_SECONDS = 0.05


def _group_send(user_id: int, event: dict[str, Any]) -> bool:
    try:
        user_event_send(user_id, event)
    except Exception:  # the live view is a courtesy; the answer must not fail on it
        logger.warning(
            "could not send %s for chat message %s", event.get("type"), event.get("message_id"), exc_info=True
        )
        return False
    return True


class ChatStream:
    """The live events of one answer being generated for `user_id`."""

    def __init__(self, *, user_id: int, session_id: str, message_id: str) -> None:
        self.user_id = user_id
        self.ids = {"session_id": session_id, "message_id": message_id}
        self.seq = 0
        self._buffer: list[str] = []
        self._last_send = 0.0
        self._broken = False  # after one failed send, stop trying for this answer

    def _send(self, event_type: str, **fields: Any) -> None:
        if self._broken:
            return
        if not _group_send(self.user_id, {"type": event_type, **self.ids, **fields}):
            self._broken = True

    def status(self, phase: str) -> None:
        self._send("chat.status", phase=phase)

    def token(self, piece: str) -> None:
        """One streamed piece of the answer (an on_token sink)."""
        if not piece:
            return
        self._buffer.append(piece)
        now = time.monotonic()
        if now - self._last_send >= TOKEN_FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        if not self._buffer:
            return
        text, self._buffer = "".join(self._buffer), []
        self._last_send = time.monotonic()
        self._send("chat.token", seq=self.seq, text=text)
        self.seq += 1

    def done_on_commit(self, payload: dict[str, Any]) -> None:
        """Send chat.done once the turn's transaction commits (the client then finds it over REST)."""
        fields = dict(payload)
        transaction.on_commit(lambda: _group_send(self.user_id, {"type": "chat.done", **self.ids, **fields}))

    def error(self, *, code: str, message: str) -> None:
        self._buffer = []
        _group_send(self.user_id, {"type": "chat.error", **self.ids, "error": {"code": code, "message": message}})
