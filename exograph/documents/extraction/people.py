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
from collections.abc import Iterable

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


def _evidence(word: str) -> re.Pattern[str]:
    name = re.escape(word)
    return re.compile(
        rf"\b{_TITLE}\.?\)?\s+{name}\b"
        rf"|(?<![\w.])[A-Z]\.\s*(?:[A-Z]\.\s*)*{name}\b"
        rf"|\b{name}\s+et\s+al\b"
        rf"|\b{name}\s+(?:is|was)\s+(?:aged\s+\d|\d+\s+years?\s+old)"
        rf"|\b{name}(?:\s*[(\[]\d+[)\]])?,?\s+{_PERSONAL_VERBS}\b"
        rf"|\b{_KIN}(?:\s+of|,)?\s+{name}\b"
        rf"|\b(?:married|marries|marry)\s+{name}\b"
        rf"|\b{name},?\s+(?:was|is)\s+(?:the|a|an)\s+(?:[\w-]+,?\s+){{0,2}}{_ROLE}\b"
        rf"|\b{name}['’]s?\s+{_LIFE}\b"
    )


def _pronoun_follows(text: str, word: str) -> bool:
    """Whether a personal pronoun follows a mention of the word within its sentence or the next one."""
    for match in re.finditer(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text):
        rest = text[match.end() : match.end() + 400]
        ends = [end.end() for end in _SENTENCE_END.finditer(rest)]
        if _PRONOUN.search(rest[: ends[1] if len(ends) > 1 else len(rest)]):
            return True
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
    """Whether the document text shows the one-word name is a person (module docstring)."""
    if word.casefold() in full_names:
        return True
    return _evidence(word).search(text) is not None or _pronoun_follows(text, word)
