"""How much of a passage is language: the text-that-is-text measure used at ingest, extraction and chat.

The rule (stated once, used everywhere): split the passage on whitespace and class every token by its
characters (Unicode categories: letters and combining marks L*/M*, digits N*, the rest punctuation or symbols):

* **word**: no digit, and letters make at least two thirds of it ("Babbage's", "well-known", "(Hepburn),",
  "歴史、あるひは", Thai with its vowel marks);
* **number**: no letter, digits at least a third of it, the rest number marks (`.,:;%/()+-` and currency
  signs): "1,234", "$5.00", "25%", "(0)";
* **code**: letters and digits with at most a third punctuation ("3d-cube", "B897", "ТЕРм08-02-390-01");
* **punctuation**: one or two characters of punctuation alone ("-", "|", "•"): not counted; runs of one
  punctuation mark repeated three times or more (leader dots "......", rules "____") are dropped from a token
  before it is classed;
* **junk**: everything else: runs of symbols and figure glyphs (`!"#`, `)*+45678#0$1923#`), debris.

Each class counts by characters. A passage is **non-language** (flagged) when words are under
`MIN_WORD_SHARE` (25 %) of its counted characters (a grid of numbers with no labels, as in a tax table) or junk is
at least `MAX_JUNK_SHARE` (40 %) (figure glyphs, OCR debris). A table whose rows carry labels ("Austria 8.9
83,879 Vienna", a benchmark table, a priced bill of quantities) stays language: it can answer "how many".
A passage with no counted characters (empty, or punctuation only) is non-language.

Flagged passages stay searchable (full text and vector); they are kept out of entity extraction and out of
chat answers. `language_text` also cuts runs of JUNK_RUN or more junk tokens (with the punctuation tokens around them) out of
a passage that is language (a figure's glyphs before its caption), for the same two uses.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

MIN_WORD_SHARE = 0.25
MAX_JUNK_SHARE = 0.40
JUNK_RUN = 3  # consecutive junk tokens language_text cuts out
_KINDS = ("word", "number", "code", "junk")
_NUMBER_MARKS = frozenset(".,:;%/()[]+-−–$€£¥'’\"")


_RULE = re.compile(r"([^\w\s])\1{2,}|_{3,}")  # leader dots, rules: "......", "____", "-----"


def _token_kind(token: str) -> str:
    token = _RULE.sub("", token)
    if not token:
        return "punctuation"
    letters = digits = other = 0
    for ch in token:
        category = unicodedata.category(ch)[0]
        if category in "LM":
            letters += 1
        elif category == "N":
            digits += 1
        else:
            other += 1
    size = len(token)
    if not letters and not digits:
        return "punctuation" if size <= 2 else "junk"
    if not digits and 3 * letters >= 2 * size:
        return "word"
    if not letters and 3 * digits >= size and all(ch.isdigit() or ch in _NUMBER_MARKS for ch in token):
        return "number"
    if letters and digits and 3 * other <= size:
        return "code"
    return "junk"


@dataclass(frozen=True)
class Language:
    """Character shares of a passage by token class (0..1 each; they sum to 1 when counted > 0)."""

    word: float
    number: float
    code: float
    junk: float
    counted: int  # characters in counted tokens

    @property
    def flagged(self) -> bool:
        """Mostly non-language: too few words, or too much junk (the module's rule)."""
        return self.counted == 0 or self.word < MIN_WORD_SHARE or self.junk >= MAX_JUNK_SHARE


def text_language(text: str) -> Language:
    """The passage's shares by token class (see the module docstring). Pure; linear in the text."""
    sizes = dict.fromkeys(_KINDS, 0)
    for token in text.split():
        kind = _token_kind(token)
        if kind != "punctuation":
            sizes[kind] += len(token)
    counted = sum(sizes.values())
    if not counted:
        return Language(0.0, 0.0, 0.0, 0.0, 0)
    return Language(
        word=sizes["word"] / counted,
        number=sizes["number"] / counted,
        code=sizes["code"] / counted,
        junk=sizes["junk"] / counted,
        counted=counted,
    )


def text_is_language(text: str) -> bool:
    """True unless the passage is mostly non-language (figure glyphs, OCR debris, a bare grid of numbers)."""
    return not text_language(text).flagged


def language_text(text: str) -> str:
    """The passage with every run of JUNK_RUN or more consecutive junk tokens cut out (whitespace collapsed
    there); the text itself when it has no such run."""
    tokens = text.split()
    kinds = [_token_kind(token) for token in tokens]
    if kinds.count("junk") < JUNK_RUN:
        return text
    keep = [True] * len(tokens)
    start = 0
    while start < len(tokens):
        if kinds[start] != "junk":
            start += 1
            continue
        end = start
        while end < len(tokens) and kinds[end] in ("junk", "punctuation"):
            end += 1
        if sum(1 for k in kinds[start:end] if k == "junk") >= JUNK_RUN:
            while start > 0 and kinds[start - 1] == "punctuation":
                start -= 1  # the run's leading marks ('!" #"') go with it
            keep[start:end] = [False] * (end - start)
        start = end
    if all(keep):
        return text
    return " ".join(token for token, kept in zip(tokens, keep, strict=True) if kept)
