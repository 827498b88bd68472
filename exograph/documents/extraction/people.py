"""Whether a one-word name the NER typed PERSON is a person by what the document says of it.

The NER model (ner.py) types a lone capitalised word PERSON whenever it looks like a name: a programming language
or a program in a research paper ("Java", "Ruby", "Safari"), a capitalised word of a language the English model
was not trained on (a Portuguese verb heading an article, a Russian noun), placeholder Latin ("Lorem", "Aliquam").
A word alone is no evidence of a person, so it stays PERSON only when the document shows a person somewhere it
writes the word:
  - a title or an initial before it ("Dr. Okafor", "(General) Hale", "T. Okafor");
  - an age ("Okafor is aged 60", "Okafor was 9 years old") or a noun only a person is ("Okafor was the wife of",
    "Okafor is a Nigerian poet");
  - "et al." after it (an author), or a verb only people do right after it, a citation number between them
    allowed ("Okafor said", "Okafor (12) proposed", "Okafor, who", "Okafor was born");
  - a kinship or a life word tied to it ("son of Okafor", "his brother Okafor", "married Okafor", "Okafor's
    wife", "Okafor's death");
  - a personal pronoun (he, she, his, her, him) in the words that follow it in its sentence or the next;
  - the word is a given name or the surname of a person of two words or more the document names ("Okafor" beside
    "Ifeoma Okafor").
Otherwise it is left untyped (CONCEPT): the node stays, the type the reader would refuse goes. A document that
writes the word as a modifier of a common noun or as a language ("the Java code", "written in Ruby") gives no
person evidence, so the word is a concept there. Names of two words or more keep the model's type.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import lru_cache

from exograph.documents.extraction.ner import _NOBLE

_TITLE = (
    r"(?:Mr|Mrs|Ms|Miss|Dr|Prof|Professor|Sir|Dame|Saint|St|Gen|General|Col|Colonel|Capt|Captain|Major|Lt|"
    r"Lieutenant|Admiral|Sgt|Sergeant|President|Senator|Governor|Judge|Justice|Rev|Reverend|Father|Pope|Bishop|"
    rf"Cardinal|Rabbi|Sheikh|Sultan|Caliph|Emir|Shah|Khan|Tsar|Czar|Pharaoh|{_NOBLE})"
)
_PERSONAL_VERBS = (
    r"(?:who|whom|whose|was\s+born|is\s+born|born|died|dies|married|marries|said|says|told|tells|wrote|writes|"
    r"argued|argues|believed|believes|claimed|claims|proposed|proposes|suggested|suggests|recalled|recalls|"
    r"replied|replies|thought|thinks|starred|stars|sang|sings|reigned|reigns|retired|resigned)"
)
_KIN = r"(?:son|daughter|wife|husband|father|mother|brother|sister|widow|widower|child|children|heir|nephew|niece)"
# nouns only a person is: "Okafor was the wife of ...", "Okafor is a Nigerian poet"
_ROLE = (
    rf"(?:{_KIN}|mistress|actor|actress|singer|writer|author|poet|painter|composer|politician|player|footballer|"
    r"director|priest|monk|nun|saint|king|queen|prince|princess|bishop|general|soldier|scientist|philosopher|"
    r"engineer|teacher|doctor|nurse|farmer|lawyer|student|pensioner)"
)
_LIFE = rf"(?:{_KIN}|death|birth|life|career|family|funeral|marriage|reign)"
_PRONOUN = re.compile(r"\b(?:he|she|his|her|him|himself|herself)\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)")


# What shows a person around a mention of the word (module docstring), in two halves that do not depend on the word,
# compiled once. Before it: a title, initials, a kin word, "married"; each pattern ends where the name starts
# (the end of a run of spaces, or of a chain of initials), so a mention shows a person when one of them ends at it.
# After it: "et al.", an age, a verb only people do, a noun only a person is, a life word.
_BEFORE_NAME = (
    re.compile(rf"\b{_TITLE}\.?\)?\s+"),
    re.compile(rf"\b{_KIN}\s+"),
    re.compile(rf"\b{_KIN}\s+of\s+"),
    re.compile(rf"\b{_KIN},\s+"),
    re.compile(r"\b(?:married|marries|marry)\s+"),
)
_INITIALS = re.compile(r"(?<![\w.])(?:[A-Z]\.\s*)+")
_INITIAL = re.compile(r"[A-Z]\.\s*")
_AFTER_NAME = re.compile(
    r"\s+et\s+al\b"
    r"|\s+(?:is|was)\s+(?:aged\s+\d|\d+\s+years?\s+old)"
    rf"|(?:\s*[(\[]\d+[)\]])?,?\s+{_PERSONAL_VERBS}\b"
    rf"|,?\s+(?:was|is)\s+(?:the|a|an)\s+(?:[\w-]+,?\s+){{0,2}}{_ROLE}\b"
    rf"|['’]s?\s+{_LIFE}\b"
)
_BOUNDARY = re.compile(r"\b")
_NOT_WORD_BEFORE = re.compile(r"(?<![\w-])")
_NOT_WORD_AFTER = re.compile(r"(?![\w-])")


@lru_cache(maxsize=4)
def _name_starts(text: str) -> frozenset[int]:
    """Where a name may start after a title, initials, a kin word or "married" in the text (once per document: the
    same text is asked about each of its one-word names)."""
    starts = {match.end() for pattern in _BEFORE_NAME for match in pattern.finditer(text)}
    for chain in _INITIALS.finditer(text):
        starts.update(initial.end() for initial in _INITIAL.finditer(text, chain.start(), chain.end()))
    return frozenset(starts)


def _mentions(text: str, word: str) -> Iterator[int]:
    """Every offset where the text writes the word (overlapping ones included)."""
    at = text.find(word)
    while at >= 0:
        yield at
        at = text.find(word, at + 1)


def _evidence(word: str, text: str) -> bool:
    """Whether a title, initials, a kin word or "married" comes right before a mention of the word (a word boundary
    after it), or "et al.", an age, a personal verb, a person's role or a life word right after it (a word boundary
    before it)."""
    starts = _name_starts(text)
    size = len(word)
    for at in _mentions(text, word):
        if at in starts and _BOUNDARY.match(text, at + size):
            return True
        if _BOUNDARY.match(text, at) and _AFTER_NAME.match(text, at + size):
            return True
    return False


def _pronoun_follows(text: str, word: str) -> bool:
    """Whether a personal pronoun follows a mention of the word (as a word of its own, hyphens included) within its
    sentence or the next one. Mentions are taken left to right without overlapping."""
    at = text.find(word)
    while at >= 0:
        end = at + len(word)
        if not (_NOT_WORD_BEFORE.match(text, at) and _NOT_WORD_AFTER.match(text, end)):
            at = text.find(word, at + 1)
            continue
        rest = text[end : end + 400]
        ends = [found.end() for found in _SENTENCE_END.finditer(rest)]
        if _PRONOUN.search(rest[: ends[1] if len(ends) > 1 else len(rest)]):
            return True
        at = text.find(word, end)
    return False


def person_words(names: Iterable[str]) -> set[str]:
    """The words (casefolded) of the names of two to four capitalised words typed PERSON: a one-word name among them
    is a given name or a surname of a person the document names in full (a longer run, or one with a lowercase
    word, is the model's misreading of a heading or a clause, no person's name)."""
    return {
        word.casefold()
        for name in names
        if 2 <= len(words := name.split()) <= 4 and all(word[:1].isupper() for word in words)
        for word in words
    }


def person_shown(word: str, text: str, full_names: set[str]) -> bool:
    """Whether the document text shows the one-word name (no whitespace in it, as resolution writes names) is a
    person (module docstring)."""
    if word.casefold() in full_names:
        return True
    return _evidence(word, text) or _pronoun_follows(text, word)
