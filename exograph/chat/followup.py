"""Follow-up questions in a chat session (issue 26): "And who sold it?" after "What did the bell cost?" is asked
with the earlier question's words, for retrieval and for the offline reader, never for what is stored or shown.

A message reads as a follow-up when it opens with and/but/what about/how about, or holds a pronoun
(it/they/he/she/its/their/them), and names nothing of its own (core.llm.extractive_text.names_in): a message
with its own names is asked alone, so one topic's words never leak into another's retrieval. Pure functions
over the session's own earlier user turns (sessions are per user: the caller has checked ownership).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from exograph.core.llm.extractive_text import names_in

_OPENER = re.compile(r"^\W*(and|but|what about|how about)\b", re.IGNORECASE)
# "that" is left out: in a question it is most often a relative ("the company that makes X"), not a pointer back.
_PRONOUN = re.compile(r"\b(it|they|he|she|its|their|them)\b", re.IGNORECASE)
# Earlier user turns read with a follow-up: back to the topic's own question (one naming something), at most these.
EARLIER_TURNS_MAX = 3


def is_follow_up(message: str) -> bool:
    """Whether message leans on an earlier turn: an opener or a pronoun, and no name of its own."""
    if names_in(message):
        return False
    return bool(_OPENER.search(message) or _PRONOUN.search(message))


def follow_up_context(message: str, earlier: Sequence[str]) -> str:
    """The earlier user questions (oldest first) message is read with, joined; "" when it is not a follow-up or
    there is no earlier turn. Walks back through earlier follow-ups to the question that set the topic."""
    if not earlier or not is_follow_up(message):
        return ""
    taken: list[str] = []
    for question in reversed(earlier):
        taken.append(" ".join(question.split()))
        if len(taken) >= EARLIER_TURNS_MAX or not is_follow_up(question):
            break
    return " ".join(reversed(taken))
