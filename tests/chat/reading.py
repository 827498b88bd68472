"""The extractive reader run as chat runs it (MiniLM meaning and the offline NER's types), over plain texts."""

from __future__ import annotations

from exograph.chat.generation import _entity_types, _similarity
from exograph.core.llm.extractive import Extracted, Statement, extract_answer


def read_as_chat(question: str, *texts: str, title: str = "") -> Extracted:
    """The reader's answer to question over texts, numbered 1..n (passages of one document titled title)."""
    statements = [Statement(n, text, "passage", title) for n, text in enumerate(texts, start=1)]
    return extract_answer(
        question=question, statements=statements, similarity=_similarity(), entity_types=_entity_types()
    )
