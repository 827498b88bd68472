"""The extractive reader's figures (exograph/core/llm/extractive_spans.py): sums of money and the currencies they are
written in, shares and changes, the units a duration or length is given in, the two ends of a move or change
("from A to B"), and what a number counts ("how many people": people of any kind). Pure."""

from __future__ import annotations

import re

from exograph.core.llm.extractive_asked import _MONEY_NOUNS
from exograph.core.llm.extractive_text import _MONTHS, _STOP, _stem

# Currencies among the units: what a "how much did they pay?" answer is measured in.
_MONEY = frozenset("pound pounds euro euros dollar dollars yen franc francs crowns kronor rupees pence cents".split())
_MONEY_STEMS = frozenset(_stem(word) for word in _MONEY_NOUNS.split())
# "how much did revenue grow": the change ("12%"), not the sum it reached
_SHARE = re.compile(r"\b(?:percent|percentage|share|proportion|fraction|rate|ratio)\b", re.IGNORECASE)
_CHANGE = re.compile(
    r"\b(?:grow|grew|grown|rise|rose|risen|increase[sd]?|fall|fell|fallen|drop(?:ped)?|decline[sd]?|climb(?:ed)?|"
    r"jump(?:ed)?|shrink|shrank|change[sd]?|(?:go|goes|went|gone)\s+(?:up|down))\b",
    re.IGNORECASE,
)


# The units of time; a "how long" question is answered in a time or a length.
_TIMES = frozenset(
    "second seconds minute minutes hour hours day days week weeks month months year years decade decades century "
    "centuries ms millisecond milliseconds microsecond microseconds".split()
)
_TIME_OR_LENGTH = _TIMES | frozenset(
    "mm cm m metre metres meter meters km kilometre kilometres kilometer kilometers mile miles foot feet inch inches "
    "yard yards".split()
)
# "how high is the waterfall": a size in space, never a time ("six hours" of the walk to it)
_DIMENSION = re.compile(r"\bhow (?:tall|wide|deep|high)\b", re.IGNORECASE)
# "What time does the coach leave?": a time of day ("8:00", "2 pm", "9.30 a.m.")
_ASKS_TIME = re.compile(r"\b(?:what|which)\s+(?:time|hours)\b|\bat\s+what\s+hours?\b", re.IGNORECASE)
_CLOCK = re.compile(
    r"(?<![\d.,])\d{1,2}[:.]\d{2}(?:\s*(?:am|pm|a\.m\.|p\.m\.))?(?![\d.,]?\d)|\b\d{1,2}\s*(?:am|pm|a\.m\.|p\.m\.)(?!\w)",
    re.IGNORECASE,
)
# A time of day a "when" question may be answered with ("open from 10am to 2pm", "registration opens at 8:15"): a
# colon's minutes, an am or pm, noon or midnight; never "2.50" of a sum or "4.2" of a size (those have no am or pm)
_DAY_TIME = r"(?:\d{1,2}:\d{2}(?:\s*(?:am|pm|a\.m\.|p\.m\.))?|\d{1,2}(?:\.\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)|(?:12\s+)?noon|midnight)"
_TIME_SPAN = re.compile(
    rf"(?<![\w.:])(?:{_DAY_TIME}(?:\s*(?:to|until|till|and|-|–)\s*{_DAY_TIME})?|any\s+time|all\s+times|"
    rf"(?:24|twenty-four)\s+hours\s+a\s+day|(?:a)?round\s+the\s+clock)(?![\w:]|\.\d)",
    re.IGNORECASE,
)  # (or at any hour: "birth partners may visit at any time", "staffed round the clock")
_TIME_OF = re.compile(r"\btime\s+of\s+(?:the\s+)?(?:year|month|week|season)\b", re.IGNORECASE)
# "When did the bridge open?" asked with a calendar word: a date, not the hour it opened at
_CALENDAR = re.compile(r"\b(?:year|years|month|century|decade|date|day|season)\b", re.IGNORECASE)


# A part of a month a "when" question may be answered with: "in the last week of January", "in early March", "at the
# end of June"
_PERIOD = re.compile(
    rf"\b(?:(?:the\s+)?(?:first|second|third|fourth|last|final)\s+(?:week|weekend|fortnight|days?)\s+of|"
    rf"(?:early|mid|late)[-\s]|(?:the\s+)?(?:end|start|beginning|middle)\s+of)\s*(?:{_MONTHS})\b(?:\s+\d{{4}})?"
)


def with_times(question: str, sentence: str, dates: list[str]) -> list[str]:
    """The candidates of a "when" question in a sentence: its dates, then the times of day it gives, a range whole
    ("10am to 2pm"); a "what time" question takes the times only (and a season too when it asks the time of year),
    and one asked with a calendar word ("in which year") its dates only."""
    if _ASKS_TIME.search(question):
        times = [m.group(0).strip() for m in _CLOCK.finditer(sentence)]
        ranges = [m.group(0) for m in _TIME_SPAN.finditer(sentence) if m.group(0) not in times]
        times = [*ranges, *(t for t in times if not any(t in r for r in ranges))]
        return times if _TIME_OF.search(question) is None else times + dates
    periods = [m.group(0) for m in _PERIOD.finditer(sentence)]
    dates = [*periods, *(d for d in dates if not any(d in p for p in periods))]  # "the last week of January" whole
    if _CALENDAR.search(question):
        return dates
    return dates + [m.group(0) for m in _TIME_SPAN.finditer(sentence) if m.group(0) not in dates]


# "How often is rent paid?": how often a thing happens ("quarterly", "every two weeks", "twice a year")
# A day of the week, one pattern for every reader module that names one
WEEKDAY = r"(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day"
_WEEKDAY = re.compile(rf"\b{WEEKDAY}s?\b")
_FREQUENCY = re.compile(
    r"\b(?:hourly|daily|nightly|weekly|fortnightly|monthly|quarterly|yearly|annually|biannually|"
    r"(?:every|each)\s+(?:other\s+|(?:\w+\s+)?)?(?:day|night|week|fortnight|month|quarter|year|hour|minute|morning|evening|"
    rf"weekend|{WEEKDAY})s?(?:(?:,\s+|\s+and\s+){WEEKDAY}s?)*|"
    r"(?:once|twice|\w+\s+times)\s+(?:a|an|per|each|every)\s+(?:day|night|week|fortnight|month|quarter|year|hour))\b",
    re.IGNORECASE,
)
# "how long/far/tall ...": a measure with its unit is asked, never a bare count
_UNIT_NEEDED = re.compile(r"\bhow (?:long|far|tall|wide|deep|high|heavy)\b", re.IGNORECASE)
_ASKS_START = re.compile(r"\b(?:from|before|baseline|previous|previously|original|originally|initial|formerly)\b", re.I)


def _move_end(sentence: str, span: str) -> int:
    """1 when the sentence says span is where a move or change ends ("from MySQL to PostgreSQL": PostgreSQL), -1 when
    it is where it starts (MySQL), else 0."""
    name = re.escape(span)
    if re.search(rf"\bfrom\s+(?:the\s+)?[A-Z0-9][^,;]{{0,40}}?\s+to\s+(?:the\s+)?{name}\b", sentence):
        return 1
    if re.search(rf"\bfrom\s+(?:the\s+)?{name}\b[^,;]{{0,40}}?\s+to\s+(?:the\s+)?[A-Z0-9]", sentence):
        return -1
    return 0


def _counts_other(sentence: str, span: str, money: bool = True) -> bool:
    """The number counts a thing: a noun follows it ("two million users", "300 people"); a sum of money counts no
    thing, unless `money` is False (a count of staff asked: "4 million euros" counts none)."""
    after = re.search(rf"{re.escape(span)}\s+(?:(?:million|billion|thousand|hundred)\s+)?([a-z]+)", sentence)
    if after is None or after.group(1) in _STOP:
        return False
    return not money or (after.group(1) not in _MONEY and not _MONEY_STEMS & {_stem(after.group(1))})


# "how many flats will have affordable rents": the noun a count question counts (flats), up to two words after "many"
COUNTED = re.compile(r"\bhow many\s+(?:[a-z-]+\s+){0,2}?([a-z-]+)")


# "how many people": a count of people of any kind ("412 adults", "140 staff", "3,000 visitors")
_PEOPLE = (
    "people persons individuals adults children men women patients participants volunteers members residents "
    "students pupils staff employees workers visitors passengers spectators delegates voters inhabitants citizens"
).split()


def _counted_nouns(noun: str) -> str:
    """The pattern of the nouns a count of noun may be written with: its own stem, or any people for people and
    for those who do something ("how many contributors": "300 people have contributed")."""
    if noun in _PEOPLE or re.search(r"(?:er|or|ist|ant|ent)s$", noun):
        return "|".join([*_PEOPLE, re.escape(noun), re.escape(_stem(noun))])
    return f"{re.escape(noun)}|{re.escape(_stem(noun))}"


_CURRENCY = "|".join(sorted(_MONEY))


def _is_sum(sentence: str, span: str) -> bool:
    """The number is a sum of money: a currency sign before it or a currency after it ("costs 25 pounds")."""
    name = re.escape(span)
    return span[:1] in "$£€¥" or bool(
        re.search(
            rf"(?:[$£€¥]\s?{name}|(?<![\w.,]){name}\s+(?:(?:million|billion|thousand)\s+)?(?:{_CURRENCY})\b)",
            sentence,
        )
    )


# "What is the maximum grant?", "How much is the largest grant?": the bound a figure is given as ("pays up to 7,500
# pounds", "at least 18 years old") answers a question asking for the most or the least
_ASKS_MOST = re.compile(r"\b(?:maximum|max|largest|biggest|highest|most|greatest|top|upper\s+limit|cap)\b", re.I)
_ASKS_LEAST = re.compile(r"\b(?:minimum|min|smallest|lowest|least|fewest|lower\s+limit)\b", re.I)
_AT_MOST = (
    r"(?:up\s+to|at\s+most|no\s+more\s+than|not\s+more\s+than|a\s+maximum\s+of|maximum\s+of|capped\s+at|as\s+much\s+as)"
)
_AT_LEAST = r"(?:at\s+least|no\s+less\s+than|not\s+less\s+than|a\s+minimum\s+of|minimum\s+of|from)"


def bound_asked(question: str, sentence: str, span: str) -> int:
    """1 when the sentence gives span as the bound the question asks for ("up to 7,500 pounds" for "the maximum
    grant", "at least 18" for "the minimum age"), else 0."""
    most, least = _ASKS_MOST.search(question) is not None, _ASKS_LEAST.search(question) is not None
    if most == least:
        return 0
    before = _AT_MOST if most else _AT_LEAST
    return int(re.search(rf"\b{before}\s+[$£€¥]?{re.escape(span.lstrip('$£€¥'))}", sentence, re.I) is not None)


_HEDGE = r"(?:about|around|approximately|roughly|circa|c\.|some|nearly|almost|an\s+estimated|estimated)"


def hedged(question: str, sentence: str, span: str) -> bool:
    """The question asks for a rough figure ("roughly how many", "approximately what year") and the sentence gives span
    as one ("woven in about 1540", "some 14,000 kettles")."""
    return bool(re.search(rf"\b{_HEDGE}\b", question, re.I)) and bool(
        re.search(rf"\b{_HEDGE}\s+{re.escape(span)}", sentence, re.I)
    )


def figure_aspect(question: str, sentence: str, span: str, kind: str) -> int:
    """How much a figure of kind fits the aspect the question asks: 2 for the bound it asks ("up to 7,500 pounds" for
    "the maximum grant", numbers only), plus 1 for a rough figure asked roughly ("about 1540" for "approximately what
    year"), plus 1 for the figure written with the question's closing qualifier ("two hours in winter" for "how long
    ... in winter"); 0 for any other span."""
    if kind not in ("number", "date"):
        return 0
    # "How long is the trip in winter?": "two hours in winter", not the "ninety minutes in summer" before it
    qualifier = re.search(r"\b(in|on|at|during)\s+((?:the\s+)?[\w-]+)\s*\?*\s*$", question, re.IGNORECASE)
    qualified = qualifier is not None and re.search(
        rf"{re.escape(span)}\s+{qualifier.group(1)}\s+{re.escape(qualifier.group(2))}\b", sentence, re.IGNORECASE
    )
    return (
        2 * (kind == "number") * bound_asked(question, sentence, span)
        + int(hedged(question, sentence, span))
        + int(bool(qualified))
    )


# "7 Tanner Street", "12 Harbour Road": a number before a street's name is where, never how many
_STREET = r"(?:Street|St|Road|Rd|Lane|Avenue|Ave|Way|Place|Square|Drive|Close|Crescent|Terrace|Row|Walk|Hill|Parade)"


def _no_figure(sentence: str, span: str) -> bool:
    """span is no count or sum in sentence: a day of the month ("opened on 3 May 1998", "born August 30, 1930"), a
    number written with a leading zero (a phone number or a code: "ring 01225 830 211"), or a house number ("7 Tanner
    Street")."""
    name = re.escape(span)
    return bool(
        re.search(rf"(?<![\d.,]){name}\s+(?:{_MONTHS})\b|\b(?:{_MONTHS})\s+{name}\b(?![.\d])", sentence)
        or re.fullmatch(r"0\d{2,}", span)
        or re.search(rf"\b0\d{{2,}}(?:\s+\d+)*\s+{name}\b", sentence)  # "830" of "01225 830 211"
        or re.search(rf"(?<![\d.,]){name}\s+(?:[A-Z][\w'’-]*\s+){{1,2}}{_STREET}\b", sentence)
    )


def sized_noun(question: str) -> str:
    """The noun whose size "how big/large/much/high is the ..." asks ("How big is the yearly bonus?" -> bonus), or
    "" (a noun phrase ending the question, one adjective at most before its noun)."""
    match = re.search(
        r"\bhow (?:big|large|much|high)\s+(?:is|are|was|were)\s+(?:the|its|their)\s+(?:[a-z]+\s+)?([a-z]+)\s*[?.]?$",
        question.casefold().strip(),
    )
    return match.group(1) if match else ""
