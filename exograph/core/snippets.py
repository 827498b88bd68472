"""A window of a long text around what was asked: search results, passages quoted as evidence, web pages."""

from __future__ import annotations

import re

SNIPPET = 300
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")


def snippet(text: str, query: str, *, limit: int = SNIPPET) -> str:
    """At most `limit` characters of text, around the first query word it contains. Whitespace is collapsed within
    a paragraph; a blank line between paragraphs is kept (a title line is not glued to the sentence after it)."""
    text = "\n\n".join(" ".join(part.split()) for part in _PARAGRAPH_BREAK.split(text or "") if part.strip())
    if len(text) <= limit:
        return text
    start = 0
    lowered = text.casefold()
    for token in re.findall(r"[^\W_]{3,}", query.casefold()):
        found = lowered.find(token)
        if found >= 0:
            start = max(0, found - limit // 4)
            break
    window = text[start : start + limit - 2]
    if start + limit - 2 < len(text):
        window = window.rsplit(" ", 1)[0] if " " in window[limit // 2 :] else window
        window += "…"
    if start > 0:
        window = "…" + window[: limit - 1 - (1 if window.endswith("…") else 0)] + ("…" if window.endswith("…") else "")
    return window[:limit]
