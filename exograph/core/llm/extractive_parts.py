"""The extractive reader's questions of two parts (exograph/core/llm/extractive.py): a question that asks two
things of one clause ("Who will teach grafting, and where?", "What did they buy, and from whom?") or closes with a
whole second question ("Who carved the memorial, and when was it raised?"), split in two questions the reader
answers one after the other. Pure."""

from __future__ import annotations

import re

# A question's closing second part: "..., and where?", "... and from whom?", "..., and who from?"
_SECOND_PART = re.compile(
    r",?\s+and\s+(where|(?:since )?when|who|whom|(?:from|by|with|to) whom|who (?:from|by|with|to)|how many|how much)\s*\?*\s*$",
    re.IGNORECASE,
)
# ... or a whole second question: "Who carved the memorial, and when was it raised?"
_SECOND_QUESTION = re.compile(
    r",\s+and\s+((?:where|when|who|whom|which|what|how many|how much)\s+(?:is|are|was|were|did|does|do|will|has|have|had)"
    r"\b[^?]*)\?*\s*$",
    re.IGNORECASE,
)
_WH_OPENER = re.compile(r"^\s*(?:who|whom|what|which|where|when|how many|how much)\b\s*", re.IGNORECASE)


def two_parts(question: str) -> tuple[str, str] | None:
    """A question that asks two things of one clause, as two questions: "Who will teach grafting, and where?" ->
    ("Who will teach grafting?", "Where will teach grafting?"); "What did they buy, and from whom?" -> (..., "Who
    did they buy from?"). None for a question of one part, or one whose first part opens with no wh-word."""
    whole = _SECOND_QUESTION.search(question)
    if whole is not None and _WH_OPENER.match(question):
        asked = whole.group(1).strip()
        return question[: whole.start()].rstrip(" ,") + "?", f"{asked[:1].upper()}{asked[1:]}?"
    tail = _SECOND_PART.search(question)
    if tail is None:
        return None
    first = question[: tail.start()].rstrip(" ,") + "?"
    opener = _WH_OPENER.match(first)
    if opener is None:
        return None
    rest = first[opener.end() :].rstrip("?").strip()
    asked = " ".join(tail.group(1).casefold().split())
    preposition = next((w for w in asked.split() if w in ("from", "by", "with", "to")), "")
    wh = "who" if preposition else asked.removeprefix("since ")
    second = f"{wh.capitalize()} {rest}{' ' + preposition if preposition else ''}?"
    return first, second
