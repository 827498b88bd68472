"""The extractive reader's overview (exograph/core/llm/extractive.py): a question asking what the documents are about
("What is this document about?", "Summarise the report", "Give me an overview", "What are the main points?") is
answered with the opening sentences of each document the evidence holds, cited, not refused for sharing no word with
them. Pure."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

from exograph.core.llm.extractive_text import whole_sentences

_DOCUMENT = r"(?:document|documents|doc|docs|file|files|paper|papers|report|reports|article|articles|text|texts|pdf|pdfs|notes?|book|upload|uploads|guidance|leaflet|letter|minutes|manual|contract|agreement)"
# what the overview is of: nothing, a pronoun, or the documents themselves ("summarise the report"), never a topic
# ("summarise the 2018 World Cup final" asks about a subject, which the documents may not cover)
_OF_DOCUMENTS = (
    rf"(?:\s+(?:of\s+)?(?:it|this|that|them|these|everything|all\s+(?:this|of\s+(?:it|them))|"
    rf"(?:the|this|that|these|those|my|our|your)\s+(?:\w+\s+)?{_DOCUMENT}))?\s*(?:,?\s*please)?[\s.?!]*$"
)
_OVERVIEW = re.compile(
    rf"^\s*(?:(?:can|could|would|will)\s+you\s+)?(?:please\s+)?(?:summari[sz]e|sum\s+up|recap|outline|"
    rf"give\s+(?:me\s+|us\s+)?(?:a\s+|an\s+)?(?:short\s+|brief\s+|quick\s+)?(?:summary|overview|gist|rundown))"
    rf"{_OF_DOCUMENTS}"
    rf"|^\s*(?:a\s+)?(?:short\s+|brief\s+)?(?:summary|overview|tl;?\s*dr){_OF_DOCUMENTS}"
    rf"|\bwhat(?:'s|\s+is|\s+are|\s+was|\s+were)\s+(?:this|that|these|those|the|my|our|your)\s+(?:\w+\s+)?{_DOCUMENT}"
    rf"\s+(?:all\s+)?about\s*\??\s*$"
    rf"|\bwhat\s+(?:do|does)\s+(?:this|that|these|those|the|my|our)\s+(?:\w+\s+)?{_DOCUMENT}\s+"
    rf"(?:say|cover|contain|describe)\s*\??\s*$"
    rf"|^\s*what\s+(?:are|were)\s+the\s+(?:main|key|most\s+important)\s+(?:points|findings|ideas|takeaways|themes|"
    rf"topics|messages){_OF_DOCUMENTS}",
    re.IGNORECASE,
)
SENTENCES_PER_DOCUMENT = 2
DOCUMENTS = 3


def asks_overview(question: str) -> bool:
    """Whether the question asks what the documents say as a whole rather than a fact in them."""
    return _OVERVIEW.search(question.strip()) is not None


class _Passage(Protocol):  # extractive.Statement, read only
    @property
    def n(self) -> int: ...
    @property
    def text(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def source(self) -> str: ...


def overview_sentences(statements: Sequence[_Passage]) -> list[tuple[int, str]]:
    """The opening whole sentences (SENTENCES_PER_DOCUMENT) of the first passage of each document (DOCUMENTS, in the
    order the evidence ranks them), as (n, sentence); [] when the evidence holds no passage."""
    chosen: list[tuple[int, str]] = []
    seen: set[str] = set()
    for statement in statements:
        if statement.kind in ("entity", "fact", "relation") or statement.source in seen:
            continue
        seen.add(statement.source)
        chosen.extend((statement.n, sentence) for sentence in whole_sentences(statement.text)[:SENTENCES_PER_DOCUMENT])
        if len(seen) >= DOCUMENTS:
            break
    return chosen
