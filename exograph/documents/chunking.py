"""Structure-aware chunking: token-bounded, overlapping windows that never cross a PDF page or a DOCX section.

Tokens are approximated by units: a whitespace-separated word, or one character of a script written
without spaces (Chinese, Japanese, Korean: each such character is its own unit, so a page of Japanese is
not one giant "word"; joined back without spaces). A window starts at `max_tokens / 1.3` units (one unit is about
1.3 WordPiece tokens in English prose) and, when the embedder's own tokenizer is given (`count_tokens`: the local
model's), shrinks until the model's count is within `max_tokens`: numbers, identifiers, URLs and other scripts
run far above 1.3 tokens a word, and a chunk past the model's 256-token input would lose its tail unseen.
Chunk ids are stable: the sha256 of (document id, ordinal, text), so re-running a stage yields the same ids.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from exograph.documents.parsing import Block
from exograph.documents.pdf_layout import pdf_pages_tidy

TOKENS_PER_WORD = 1.3
# Scripts written without spaces between words: CJK punctuation, kana, CJK ideographs (and extension A,
# compatibility), Hangul syllables, half/full-width forms.
_NO_SPACE_CHAR = re.compile(
    "[\u3000-\u303f\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]"
)


@dataclass(frozen=True)
class _Unit:
    text: str
    glued: bool  # no space before it in the source text
    paragraph: bool = False  # the first word of a paragraph: a blank line before it in the chunk's text


_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")


def _units(text: str) -> list[_Unit]:
    """Words, with every CJK character split out as a unit of its own (glued to its neighbours); the first word of
    each paragraph (after a blank line) is marked, so a title or a caption is never glued to the sentence after it."""
    units: list[_Unit] = []
    for paragraph in _PARAGRAPH_BREAK.split(text):
        first = len(units)
        units.extend(_paragraph_units(paragraph))
        if first and len(units) > first:
            units[first] = _Unit(units[first].text, False, paragraph=True)
    return units


def _paragraph_units(text: str) -> list[_Unit]:
    units: list[_Unit] = []
    for word in text.split():
        if not _NO_SPACE_CHAR.search(word):
            units.append(_Unit(word, False))
            continue
        glued, run = False, ""
        for ch in word:
            if _NO_SPACE_CHAR.match(ch):
                if run:
                    units.append(_Unit(run, glued))
                    glued, run = True, ""
                units.append(_Unit(ch, glued))
                glued = True
            else:
                run += ch
        if run:
            units.append(_Unit(run, glued))
    return units


def _join(units: Sequence[_Unit]) -> str:
    """The units as text: a blank line before a paragraph's first word, a space before other words, nothing before a
    glued character."""
    return "".join(
        ("" if index == 0 or unit.glued else "\n\n" if unit.paragraph else " ") + unit.text
        for index, unit in enumerate(units)
    )


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


MIN_WINDOW = 8  # units: a window never shrinks below this, whatever the tokenizer counts


def chunk_blocks(
    *,
    document_id: str,
    blocks: Sequence[Block],
    max_tokens: int,
    overlap_tokens: int,
    count_tokens: Callable[[str], int] | None = None,
) -> list[Chunk]:
    """Split parsed blocks into overlapping windows of at most max_tokens each: counted by count_tokens when
    given (the embedder's tokenizer), else estimated at 1.3 tokens a unit. A PDF's running heads, footers and page
    numbers are left out and its headings made paragraphs of their own (pdf_layout)."""
    window = max(MIN_WINDOW, int(max_tokens / TOKENS_PER_WORD))
    overlap = min(int(overlap_tokens / TOKENS_PER_WORD), window // 2)
    chunks: list[Chunk] = []
    for page, heading, words in _sections_with_pages(pdf_pages_tidy(blocks)):
        start = 0
        while start < len(words):
            piece = words[start : start + window]
            text = _render(piece, heading=heading, first=start == 0)
            if count_tokens is not None:
                tokens = count_tokens(text)
                while tokens > max_tokens and len(piece) > MIN_WINDOW:
                    keep = max(MIN_WINDOW, min(len(piece) - 1, len(piece) * max_tokens // tokens))
                    piece = piece[:keep]
                    text = _render(piece, heading=heading, first=start == 0)
                    tokens = count_tokens(text)
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
            if start + len(piece) >= len(words):
                break
            nominal = start + len(piece) - min(overlap, len(piece) // 2)
            start = _sentence_start(words, nominal, low=max(start + 1, nominal - overlap), high=start + len(piece))
    return chunks


# A unit ending a sentence: its last character, before closing quotes or brackets, is . ! ? or a CJK full stop.
_SENTENCE_END = re.compile(r"[.!?。！？][\"'”’)\]]*$")


def _opens_sentence(words: Sequence[_Unit], index: int) -> bool:
    return words[index].paragraph or bool(_SENTENCE_END.search(words[index - 1].text))


def _sentence_start(words: Sequence[_Unit], nominal: int, *, low: int, high: int) -> int:
    """Where the next window starts: the sentence (or paragraph) start nearest before `nominal` down to `low` (the
    overlap grows at most to twice its size), else the nearest after it below `high` (the overlap shrinks), else
    `nominal` (a sentence longer than the overlap). A window opening mid-sentence would read its tail as a sentence
    of its own, behind the section's heading ("Handbook: it goes home.")."""
    for index in range(nominal, low - 1, -1):
        if _opens_sentence(words, index):
            return index
    for index in range(nominal + 1, high):
        if _opens_sentence(words, index):
            return index
    return nominal


def _render(piece: Sequence[_Unit], *, heading: str, first: bool) -> str:
    """A window's text: a section's later windows carry its heading's last part as context, a paragraph of its own
    (a title line, which the reader never quotes; glued on with ': ' it read as the first sentence's opening)."""
    text = _join(piece)
    return f"{heading.split(' › ')[-1]}\n\n{text}" if heading and not first else text


def _sections_with_pages(blocks: Sequence[Block]) -> Iterable[tuple[int | None, str, list[_Unit]]]:
    """Sections as (page, heading, units); a DOCX section keeps the page of its first block. A section that is only
    its heading (a document's title straight above its first subheading) opens the next section instead of being a
    passage of a title alone, which search ranked high and which says nothing."""
    key: tuple[str, object] | None = None
    page: int | None = None
    heading = ""
    words: list[_Unit] = []
    bare = False  # the section so far holds headings only
    for block in blocks:
        block_key: tuple[str, object] = ("page", block.page) if block.kind == "page" else ("heading", block.heading)
        if block_key != key:
            carried = words if bare and block_key[0] == "heading" and key is not None and key[0] == "heading" else []
            if words and not carried:
                yield page, heading, words
            key, heading, words = block_key, ("" if block.kind == "page" else block.heading), carried
            page = page if carried else block.page
            bare = True
        units = _units(block.text)
        if words and units:  # a block of the same section is a paragraph of its own
            units[0] = _Unit(units[0].text, False, paragraph=True)
        words.extend(units)
        bare = bare and block.kind == "heading"
    if words:
        yield page, heading, words
