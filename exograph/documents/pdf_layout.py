"""A PDF's page furniture kept out of its sentences: running heads and footers, bare page numbers, and headings.

A text layer gives a page's lines, not its paragraphs, so the line repeated at the top of every page ("Copyright
Office Summary December 1998 Page 3") and a heading ("INTRODUCTION", "2.3 Results") would be read as the start of
the sentence below them. Only lines that are clearly furniture are touched: a short line of content (an author's
name, an affiliation, an address) stays where it is, glued to its neighbours as before.

1. Running heads and footers: a line within the first or last ZONE_LINES lines of a page whose letters (case
   folded; the page number and spacing left out) recur in that zone on at least half the pages of a document of at
   least MIN_PAGES pages, and never elsewhere on a page (a body text that repeats is no running head), is dropped,
   and so is a line nearly matching one (a scan's OCR misreads a letter or two); so is a bare page number ("7",
   "Page 7", "- 7 -", "7 of 18") as a page's first or last line.
2. Headings: a numbered section heading ("3 Method", "2.3 Related Work") or a line of 1-6 words in capitals
   ("ABSTRACT", "TITLE I: WIPO TREATY IMPLEMENTATION") becomes a paragraph of its own (blank lines around it).

Pages keep their numbers: only a page's text changes, and a page left with no text is dropped.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from difflib import SequenceMatcher

from exograph.documents.parsing import Block

ZONE_LINES = 6  # a page's running head may sit under a footnote the text layer puts first (pm_dmca.pdf page 4)
MIN_PAGES = 3
RUNNING_SHARE = 0.5  # of the pages with text
NEAR_MATCH = 0.85  # SequenceMatcher ratio of two normalised lines read as the same running head
MIN_HEAD_LETTERS = 3
MAX_CAPS_WORDS = 6
CAPS_LETTER_SHARE = 0.6
MAX_NUMBERED_WORDS = 8

_PAGE_NUMBER = re.compile(r"[\W_]*(?:page|p\.|seite|s\.)?\s*\d{1,4}(?:\s*(?:of|/|von)\s*\d{1,4})?[\W_]*", re.IGNORECASE)
# "3 Method", "2.3 Related Work", "4.1. Results": a section number, then a capitalised title without a sentence end.
_NUMBERED_HEADING = re.compile(r"\d{1,2}(?:\.\d{1,2}){0,3}\.?\s+[^\W\d_][^.!?;:,]*")
_TRAILING_JOINERS = {"a", "an", "and", "as", "at", "by", "for", "from", "in", "of", "on", "or", "the", "to", "with"}


def _normal(line: str) -> str:
    """A line's running-head key: its letters, case folded (the page number in it, wherever it stands, and spacing
    left out)."""
    return "".join(ch for ch in line.casefold() if ch.isalpha())


def page_number_line(line: str) -> bool:
    """A bare page number: "7", "Page 7", "- 7 -", "7 of 18", "—4"."""
    return bool(_PAGE_NUMBER.fullmatch(line.strip()))


def heading_line(line: str) -> bool:
    """A line that is clearly a heading: a numbered section title or 1-6 words in capitals."""
    body = " ".join(line.split())
    words = body.split()
    if not words or body[-1] in ",;-":
        return False
    letters = [ch for ch in body if ch.isalpha()]
    if (
        len(words) <= MAX_CAPS_WORDS
        and len(letters) >= MIN_HEAD_LETTERS
        and len(letters) >= CAPS_LETTER_SHARE * len(body.replace(" ", ""))  # not "(ACL-04)." nor a formula
        and all(ch.isupper() for ch in letters)
    ):
        return True
    if not _NUMBERED_HEADING.fullmatch(body):
        return False
    title = words[1:]
    return (
        len(title) <= MAX_NUMBERED_WORDS
        and title[0][:1].isupper()
        and title[-1].casefold() not in _TRAILING_JOINERS
        and sum(word[:1].isupper() for word in title) * 2 >= len(title)  # title-like, not a list item's sentence
    )


def _zone(lines: Sequence[str]) -> set[int]:
    """The indexes of a page's first and last ZONE_LINES lines with text."""
    filled = [index for index, line in enumerate(lines) if line.strip()]
    return set(filled[:ZONE_LINES]) | set(filled[-ZONE_LINES:])


def _running_keys(pages: Sequence[list[str]]) -> list[str]:
    """The normalised lines found in the top or bottom zone of at least half the pages."""
    seen: Counter[str] = Counter()
    inside: set[str] = set()  # keys also found away from the zones: body text that repeats (a blind text)
    for lines in pages:
        zone = _zone(lines)
        keys = {_normal(lines[i]) for i in zone}
        seen.update(key for key in keys if len(key) >= MIN_HEAD_LETTERS)
        inside.update(_normal(line) for index, line in enumerate(lines) if index not in zone and line.strip())
    least = max(2, RUNNING_SHARE * len(pages))
    return [key for key, count in seen.items() if count >= least and key not in inside]


def _is_running(line: str, keys: Sequence[str]) -> bool:
    key = _normal(line)
    if not key:
        return False
    return key in keys or any(
        abs(len(key) - len(other)) <= 0.2 * len(other) and SequenceMatcher(None, key, other).ratio() >= NEAR_MATCH
        for other in keys
    )


def _page_text(lines: list[str], keys: Sequence[str], *, numbered: bool) -> str:
    zone = _zone(lines)
    kept = [line for index, line in enumerate(lines) if not (index in zone and _is_running(line, keys))]
    filled = [index for index, line in enumerate(kept) if line.strip()]
    if numbered and filled:
        ends = {filled[0], filled[-1]}
        kept = [line for index, line in enumerate(kept) if not (index in ends and page_number_line(line))]
    out: list[str] = []
    for line in kept:
        if heading_line(line):
            out.extend(["", line.strip(), ""])
        else:
            out.append(line)
    return re.sub(r"\n[ \t]*\n(?:[ \t]*\n)+", "\n\n", "\n".join(out)).strip()


def pdf_pages_tidy(blocks: Sequence[Block]) -> list[Block]:
    """The blocks with each PDF page's running heads, footers and bare page numbers dropped and its headings made
    paragraphs of their own (see the module's docstring); other blocks unchanged, page numbers kept."""
    indexes = [index for index, block in enumerate(blocks) if block.kind == "page" and block.text.strip()]
    if not indexes:
        return list(blocks)
    pages = {index: blocks[index].text.split("\n") for index in indexes}
    keys = _running_keys(list(pages.values())) if len(pages) >= MIN_PAGES else []
    out: list[Block] = []
    for index, block in enumerate(blocks):
        if index not in pages:
            out.append(block)
            continue
        text = _page_text(pages[index], keys, numbered=len(pages) > 1)
        if text:
            out.append(replace(block, text=text))
    return out
