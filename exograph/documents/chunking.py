"""Structure-aware chunking: token-bounded, overlapping windows that never cross a PDF page or a DOCX section.

Tokens are approximated by words: one whitespace-separated word ≈ 1.3 model tokens for
English under a WordPiece tokenizer such as all-MiniLM-L6-v2's (a rule of thumb, not measured per text), so a
window of `max_tokens` holds `max_tokens / 1.3` words. The model's 256-token input limit
is therefore respected with the default of 200 tokens. Chunk ids are stable: the sha256
of (document id, ordinal, text), so re-running a stage yields the same ids.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from exograph.documents.parsing import Block

TOKENS_PER_WORD = 1.3


@dataclass(frozen=True)
class Chunk:
    id: str
    ordinal: int
    text: str
    page: int | None
    heading: str


def chunk_id(document_id: str, ordinal: int, text: str) -> str:
    digest = hashlib.sha256(f"{document_id}\x1f{ordinal}\x1f{text}".encode()).hexdigest()
    return f"chunk_{digest[:40]}"


def chunk_blocks(*, document_id: str, blocks: Sequence[Block], max_tokens: int, overlap_tokens: int) -> list[Chunk]:
    """Split parsed blocks into overlapping windows of at most max_tokens (approximate) each."""
    window = max(8, int(max_tokens / TOKENS_PER_WORD))
    overlap = min(int(overlap_tokens / TOKENS_PER_WORD), window // 2)
    step = window - overlap
    chunks: list[Chunk] = []
    for page, heading, words in _sections_with_pages(blocks):
        start = 0
        while start < len(words):
            piece = words[start : start + window]
            text = " ".join(piece)
            if heading:
                text = f"{heading.split(' › ')[-1]}: {text}" if start > 0 else text
            ordinal = len(chunks)
            chunks.append(
                Chunk(
                    id=chunk_id(document_id, ordinal, text),
                    ordinal=ordinal,
                    text=text,
                    page=page,
                    heading=heading[:500],
                )
            )
            if start + window >= len(words):
                break
            start += step
    return chunks


def _sections_with_pages(blocks: Sequence[Block]) -> Iterable[tuple[int | None, str, list[str]]]:
    """Sections as (page, heading, words); a DOCX section keeps the page of its first block."""
    key: tuple[str, object] | None = None
    page: int | None = None
    heading = ""
    words: list[str] = []
    for block in blocks:
        block_key: tuple[str, object] = ("page", block.page) if block.kind == "page" else ("heading", block.heading)
        if block_key != key:
            if words:
                yield page, heading, words
            key, page, heading, words = block_key, block.page, ("" if block.kind == "page" else block.heading), []
        words.extend(block.text.split())
    if words:
        yield page, heading, words
