"""The `extractive` provider: no network, no generation. It answers with the evidence sentences that
share the most words with the question, each cited [n], and says plainly when the evidence holds
no answer. Every sentence is copied from its evidence, so it never states a figure the evidence lacks."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

NO_ANSWER = "The graphs do not hold an answer to this question."
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_WORD = re.compile(r"[^\W_]{3,}")
_STOP = frozenset(
    "the and for are was were with that this from what which who whom whose when where why how does did "
    "has have had into about over than then them they their there its his her our you your not but can "
    "tell me give list show any all some".split()
)


def _terms(text: str) -> set[str]:
    return {word for word in _WORD.findall(text.casefold()) if word not in _STOP}


def sentences_of(text: str) -> list[str]:
    """A text's sentences (evidence snippets may start or end mid-sentence; ellipses are stripped)."""
    text = " ".join(text.replace("…", " ").split())
    return [part.strip() for part in _SENTENCE.split(text) if part.strip()]


def extractive_answer(
    *,
    question: str,
    evidence: Sequence[tuple[int, str]],
    max_sentences: int = 3,
    on_token: Callable[[str], None] | None = None,
) -> str:
    """Up to `max_sentences` evidence sentences sharing the most question terms, each ending in [n]. Pure."""
    wanted = _terms(question)
    scored: list[tuple[float, int, int, str]] = []
    for position, (number, text) in enumerate(evidence):
        for sentence in sentences_of(text):
            overlap = len(wanted & _terms(sentence))
            if overlap:
                scored.append((overlap / (1 + len(wanted)), -position, number, sentence))
    if not scored:
        if on_token is not None:
            on_token(NO_ANSWER)
        return NO_ANSWER
    scored.sort(reverse=True)
    chosen: list[str] = []
    seen: set[str] = set()
    for _, _, number, sentence in scored:
        key = sentence.casefold()
        if key in seen:
            continue
        seen.add(key)
        body = sentence.rstrip()
        end = body[-1] if body[-1] in ".!?" else "."
        body = body.rstrip(".!?")
        line = f"{body} [{number}]{end}"
        chosen.append(line)
        if on_token is not None:
            on_token(line + " ")
        if len(chosen) >= max_sentences:
            break
    return " ".join(chosen)
