"""The extractive reader's spans of a kind (exograph/core/llm/extractive_spans.py): the phrases of a sentence that may
answer a question asking for a date, a number, a role, a meaning, a frequency, a nationality, a person or a place,
and the NER types each kind of answer takes. Pure."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from exograph.core.llm.extractive_asked import (
    _NOUN_TYPES,
    _PERSON_NOUNS,
    _PLACE_NOUNS,
    _singular,
    asked_noun,
    head_noun,
)
from exograph.core.llm.extractive_figures import _FREQUENCY, WEEKDAY
from exograph.core.llm.extractive_link import _ROLE_ASKED
from exograph.core.llm.extractive_referents import _SAME_THING
from exograph.core.llm.extractive_roles import _common_places, role_phrases
from exograph.core.llm.extractive_text import _DATE, _NATIONALITY, _NUMBER, _measured, _stem, names_in, spelled

# The types a kind of answer takes; a span the NER types otherwise is not of that kind.
_KIND_TYPES = {
    "person": frozenset({"PERSON", "ORGANIZATION"}),
    "place": frozenset({"LOCATION"}),
    "date": frozenset({"DATE"}),
    "number": frozenset({"QUANTITY"}),
}


# A label over a list of people: "Authors: Hanna Berg and Tomas Ruiz", "Attendees: ...", "Speakers: ..."
_PEOPLE_LABEL = re.compile(
    r"\b(authors?|attendees|present|speakers?|presenters?|editors?|contributors?|organi[sz]ers?|written by)\s*:\s*",
    re.IGNORECASE,
)


def people_label(sentence: str, span: str) -> str:
    """The label (lower case) of a list of people span is in ("authors" for "Authors: Hanna Berg and Tomas Ruiz,
    University of Tartu"), or "": they are people whatever the NER says, and the label says what they did."""
    for label in _PEOPLE_LABEL.finditer(sentence):
        listed = re.match(rf"(?:[^:;.]*?(?:,|\band)\s+)?{re.escape(span)}\b", sentence[label.end() :])
        if listed is not None and len(span.split()) >= 2:
            return label.group(1).casefold()
    return ""


def ends_in_noun(span: str, noun: str) -> bool:
    """The name's own last word is the noun ("the Green Party" for "party")."""
    return _stem(span.split()[-1].casefold()) == _stem(noun)


def same_noun(noun: str, asked: str) -> bool:
    """noun names what the asked noun does: itself, or its other word ("firm" for "which company")."""
    return bool(noun) and (_stem(noun) == _stem(asked) or any({noun, asked} <= group for group in _SAME_THING))


def asked_role(question: str) -> str:
    """The role a "Who is the <role>?" question asks for ("Who is the club treasurer?" -> treasurer), or ""."""
    match = _ROLE_ASKED.match(question)
    return _singular((match.group(2) or match.group(1)).casefold()) if match else ""


def role_bound(sentence: str, span: str) -> str:
    """The role noun a copula binds span to ("the treasurer is Raj Patel", "Raj Patel is the club's treasurer",
    "the accompanist, Tomas Lindqvist"), singular and lower case; "" when none."""
    name = re.escape(span)
    before = re.search(rf"\b([a-z][a-z-]+)(?:\s+(?:is|was|will be|has been)|,)\s+{name}\b", sentence)
    after = re.search(
        rf"\b{name},?\s+(?:is|was|will be|has been|as)\s+(?:the|its|their|our)\s+([a-z'’\s-]+?)\b(?=[,.;]|$|\s+(?:and|of|for|since|until)\b)",
        sentence,
    )
    word = (before.group(1) if before else "") or (after.group(1).split()[-1] if after else "")
    return _singular(word) if word and word not in ("and", "or", "but", "that", "which", "who") else ""


# A day of the week, maybe recurring: "every Thursday evening", "the first Tuesday of each month", "Saturdays"
_RECURRING = re.compile(
    r"\b(?:(?:every|each)\s+(?:other\s+)?|(?:the\s+)?(?:first|second|third|fourth|last)\s+)?"
    rf"{WEEKDAY}s?(?:\s+of\s+(?:each|every|the)\s+month)?"
    r"(?:\s+(?:morning|afternoon|evening|night)s?)?"
    rf"(?:(?:,\s+|,?\s+and\s+)(?:[a-z]+\s+){{0,2}}{WEEKDAY}s?)*\b"  # "Tuesdays, Saturdays and ..."
)


# The colours a "what colour" question is answered by, with a shade before one ("dark green", "pale blue"), and a
# list of them as one answer ("green and white").
_ONE_COLOUR = (
    r"\b(?:(?:dark|light|pale|bright|deep|navy)[ -])?(?:red|orange|yellow|green|blue|purple|violet|pink|brown|black|"
    r"white|grey|gray|silver|gold|golden|beige|cream|maroon|turquoise|teal|crimson|scarlet|ivory|indigo|magenta|"
    r"cyan|bronze|navy)\b"
)
_COLOUR = re.compile(rf"{_ONE_COLOUR}(?:(?:,\s*|\s+and\s+|\s+or\s+|,\s+and\s+){_ONE_COLOUR})*", re.IGNORECASE)


def _spans(sentence: str, kind: str, measure: bool = False) -> list[str]:
    """The spans of sentence that may answer a question of kind; a measure question ("how long", "how much") takes
    a number with its unit when the sentence writes one."""
    if kind == "date":  # a day of the week where no date is written: "meets on the first Tuesday of each month"
        return [m.group(0) for m in _DATE.finditer(sentence)] or [m.group(0) for m in _RECURRING.finditer(sentence)]
    if kind == "number":
        found = list(_NUMBER.finditer(sentence))
        return [_sign(sentence, m.start()) + ((measure and _measured(sentence, m)) or m.group(0)) for m in found]
    if kind == "role":
        return role_phrases(sentence)
    if kind == "colour":
        return [m.group(0) for m in _COLOUR.finditer(sentence)]
    if kind == "frequency":
        return [m.group(0) for m in _FREQUENCY.finditer(sentence)]
    if kind == "meaning":  # 'Ribollita means "reboiled"', "ECU stands for engine control unit"
        said = re.findall(r"\b(?:means|meant|meaning|stands\s+for|stood\s+for)\s+[\"“‘']?([^\"”’.,;:!?()]+)", sentence)
        return [phrase.strip() for phrase in said if phrase.strip()]
    # "Kestrel Freight's chief executive": the name, not its possessive
    # a figure ("25x", "10 km") is no name: it answers how much or how many, never which or who
    # "the Leeds-based maker": the place is Leeds
    names = list(
        dict.fromkeys(re.sub(r"['’]s$|-based$", "", name) for name in names_in(sentence) if not name[:1].isdigit())
    )
    if kind == "nationality":
        return [name for name in names if _NATIONALITY.match(name)]
    # "Picric acid is an organic compound": the subject is the name with its common noun
    subject = re.match(r"([A-Z][\w-]*)\s+([a-z][a-z-]+)\s+(?:is|was|are|were)\s+(?:an?|the)\b", sentence)
    if kind == "name" and subject is not None and subject.group(1) in names:
        names = [subject.group(0).rsplit(" ", 2)[0] if n == subject.group(1) else n for n in names]
    if kind == "name":  # "the Apache 2.0 licence", "Python 3.11": a name with its version is one name
        names = [
            v.group(0) if (v := re.search(rf"\b{re.escape(n)}\s+v?\d+(?:\.\d+)+\b", sentence)) else n for n in names
        ]
    if kind == "person":
        names = [_person_named(name, sentence) for name in names if not _NATIONALITY.match(name)]
    if kind == "place":
        after = re.findall(r"\b(?:in|at|from|near|of)\s+((?:[A-Z][\w'’.-]*(?:,?\s+)?)+)", sentence)
        return list(dict.fromkeys([a.strip(" ,.") for a in after if a.strip(" ,.")] + names + _common_places(sentence)))
    return names


def _person_named(name: str, sentence: str) -> str:
    """A name as a who-question's answer: "the Harwick family" for "The Harwick" before "family", and "Amara
    Lindqvist" for "Amara Lindqvist of Durham University" (the person, not where they work)."""
    if re.search(rf"\b{re.escape(name)}\s+family\b", sentence):
        return re.sub(r"^The\s+", "", name) + " family"
    person, of, where = name.partition(" of ")
    return person if of and len(person.split()) >= 2 and where else name


def _sign(sentence: str, at: int) -> str:
    """The currency sign written right before a number at `at` ("$4.2 million": a sum keeps its sign), or ""."""
    before = sentence[at - 1] if at > 0 else ""
    return before if before and before in "$£€¥" else ""


def expected_types(question: str, kind: str) -> frozenset[str]:
    """The NER types an answer of kind may take for this question (empty: any): who -> a person or a body (a
    person when the question's noun is a person's), where -> a place, when -> a date, "which company" -> a body."""
    noun = head_noun(question)
    if kind == "person" and noun in _PERSON_NOUNS:
        return frozenset({"PERSON"})
    if kind == "name":
        return _NOUN_TYPES.get(noun, frozenset())
    return _KIND_TYPES.get(kind, frozenset())


def _type_of(span: str, types: dict[str, str]) -> str:
    """The NER type of span: of the typed name it equals, else of one holding it or held by it; "" if untyped."""
    key = span.casefold()
    if key in types:
        return types[key]
    for name, kind in types.items():
        if len(name) > 2 and (name in key or key in name):
            return kind
    return ""


_APPOSITION_END = frozenset("of in at on by with from for to and or that which who whose where".split())


def _apposed(sentence: str, span: str, noun: str) -> bool:
    """The sentence says what span is in an apposition naming noun: "the Fjordheart Foundation, a charity set up
    by ..." is a charity; "Kiln Lane, a ground that holds ..." is a ground."""
    match = re.search(rf"{re.escape(span)},\s+(?:a|an|the)\s+([^,.;:()]+)", sentence)
    if match is None:
        return False
    # the apposition's noun phrase, up to four words before its first preposition or clause ("the second highest
    # waterfall in Scotland": a waterfall)
    words = list(itertools.takewhile(lambda w: w not in _APPOSITION_END, match.group(1).casefold().split()))[:4]
    return _stem(noun) in {_stem(w) for w in words}


_WIDEST = frozenset("country nation state".split())  # what a "town, region, country" place names last
# "What is the full name of ...?": an acronym is answered written out
_FULL_NAME = re.compile(r"\b(?:full|complete|unabbreviated)\s+(?:name|title|form)\b", re.IGNORECASE)


def as_asked(short: str, question: str, kind: str, sentences: Sequence[str]) -> str:
    """The short answer in the form the question asks for: a person as the evidence most often names them
    (_common_name), the country of a "town, region, country" place for "what country" ("Angus, Scotland" ->
    Scotland), an acronym written out for "the full name of" ("SARS" -> "severe acute respiratory syndrome")."""
    short = _common_name(short, sentences, kind)
    if kind == "place" and "," in short and _singular(asked_noun(question)) in _WIDEST:
        short = short.rsplit(",", 1)[1].strip() or short
    if _FULL_NAME.search(question):
        short = next((w for s in sentences if (w := spelled(short, s))), short)
    return short


def _common_name(name: str, sentences: Sequence[str], kind: str) -> str:
    """A person's name as the evidence most often writes it: "Larnelle Harris" for "Larnelle Steward Harris" when
    another sentence names them so (a reference work's first sentence gives the full birth name)."""
    words = name.split()
    if kind == "person" and len(words) == 1 and name[:1].isupper():
        # "The premiere was conducted by Vane himself": the person another sentence names in full ("Herbert Vane")
        full = {m.group(0) for s in sentences for m in re.finditer(rf"\b[A-Z][\w'’-]+\s+{re.escape(name)}\b", s)}
        return next(iter(full)) if len(full) == 1 else name
    if kind not in ("person", "name") or len(words) < 3:
        return name
    pattern = re.compile(rf"\b{re.escape(words[0])}\s+(?:[A-Z]\.\s+)?{re.escape(words[-1])}\b")
    found = [m.group(0) for s in sentences if (m := pattern.search(s))]
    return max(sorted(set(found)), key=found.count) if found else name


_ROLES = _PERSON_NOUNS | _PLACE_NOUNS | frozenset(_NOUN_TYPES)


def _role_before(sentence: str, span: str) -> str:
    """The role noun written just before span ("the novelist Ida Warne" -> novelist), lower case; "" if none."""
    match = re.search(rf"\b([a-z][a-z-]+)\s+{re.escape(span)}", sentence)
    if match is None:
        return ""
    word = _singular(match.group(1).split("-")[-1])
    return word if word in _ROLES else ""
