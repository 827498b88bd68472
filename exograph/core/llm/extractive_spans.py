"""The extractive reader's short answers (exograph/core/llm/extractive.py): the type of answer a question asks
for (a person, place, date, number, name, nationality) and the spans of that type in the best sentences. Pure."""

from __future__ import annotations

import re
from collections.abc import Sequence

from exograph.core.llm.extractive_text import (
    _DATE,
    _NAME_WORD,
    _NATIONALITY,
    _NUMBER,
    _STOP,
    _YESNO,
    _all_stems,
    _Sentence,
    _stem,
    names_in,
)

# What a "what/which <noun>" question's noun says about its answer (the rest are names of that noun's kind).
_PLACE_NOUNS = frozenset(
    "city country state town county place region island river village district province capital location "
    "continent area neighborhood neighbourhood suburb borough municipality nation".split()
)
_DATE_NOUNS = frozenset("year date day month century decade era period timeframe".split())
_PERSON_NOUNS = frozenset(
    "person man woman actor actress singer writer author director player politician musician artist "
    "screenwriter producer composer painter poet novelist scientist manager coach driver footballer "
    "king queen president founder leader journalist comedian rapper son daughter father mother brother "
    "sister wife husband".split()
)
_NOT_NOUN = frozenset(
    "is was are were be been did does do has have had can could will would should may might in of on at "
    "from by for that who which whom whose with to and or as than into about during after before under "
    "between among across".split()
)
_KIND_OF = frozenset("type kind sort name form genre".split())


def asked_noun(question: str) -> str:
    """The noun a "what/which ..." question asks for ("what county" -> county, "which Mexican Formula One
    driver" -> driver, "what type of forum" -> forum), lower case; "" when the question names none."""
    match = re.search(r"\b(?:what|which)\s+(.*)", question, re.IGNORECASE)
    if match is None:
        return ""
    words = re.findall(r"[\w'’-]+|[^\w\s]", match.group(1))
    if len(words) > 2 and words[0].casefold() in ("is", "was", "are", "were") and words[1].casefold() == "the":
        words = words[2:]  # "what is the county seat of ...": the noun phrase after "the"
    phrase: list[str] = []
    for index, word in enumerate(words):
        low = word.casefold()
        if not re.match(r"[\w'’-]+$", word) or low in _NOT_NOUN:
            if low == "of" and phrase and phrase[-1].casefold() in _KIND_OF:
                phrase = []  # "type of forum": the noun is after "of"
                continue
            break
        if index >= 8:
            break
        phrase.append(word)
    if not phrase or phrase[-1].casefold() in _STOP:
        return ""
    return phrase[-1].casefold()


def _answer_type(question: str) -> str:
    q = question.casefold().strip()
    if _YESNO.match(q):
        return "yesno"
    if re.search(r"\bhow (many|much|long|old|far|tall|large|big)\b|\bwhat (number|percentage|amount)\b", q):
        return "number"
    if re.match(r"(how (do|does|did|is|are|was|were|can|could|should|would|has|have)|why)\b", q):
        return "manner"  # asks how or why: answered by the best sentences, never a name picked out of them
    noun = asked_noun(question)
    # The wh-word may open the question or close it ("... a civil war that ended when?").
    last = re.sub(r"[^\w\s]", " ", q).split()[-1:]
    if q.startswith("when") or last == ["when"] or noun in _DATE_NOUNS or re.search(r"\bdate of\b", q):
        return "date"
    if q.startswith("where") or last == ["where"] or noun in _PLACE_NOUNS:
        return "place"
    if re.search(r"\bnationality\b", q):
        return "nationality"
    if q.startswith(("who", "whom", "whose")) or noun in _PERSON_NOUNS:
        return "person"
    return "name"


def _spans(sentence: str, kind: str) -> list[str]:
    if kind == "date":
        return [m.group(0) for m in _DATE.finditer(sentence)]
    if kind == "number":
        return [m.group(0) for m in _NUMBER.finditer(sentence)]
    names = [name for name in names_in(sentence) if not name.isdigit()]
    if kind == "nationality":
        return [name for name in names if _NATIONALITY.match(name)]
    if kind == "person":
        names = [name for name in names if not _NATIONALITY.match(name)]
    if kind == "place":
        after = re.findall(r"\b(?:in|at|from|near|of)\s+((?:[A-Z][\w'’.-]*(?:,?\s+)?)+)", sentence)
        return list(dict.fromkeys([a.strip(" ,.") for a in after if a.strip(" ,.")] + names))
    return names


def _nearness(sentence: str, span: str, asked: frozenset[str] | set[str]) -> float:
    """1.0 when span stands next to a word the question uses, falling to 0 at 12 words away."""
    words = _NAME_WORD.findall(sentence.casefold())
    first = _NAME_WORD.findall(span.casefold())[:1]
    if not first or first[0] not in words:
        return 0.0
    at = words.index(first[0])
    hits = [i for i, w in enumerate(words) if _stem(w) in asked and w not in _STOP]
    if not hits:
        return 0.0
    return max(0.0, 1.0 - min(abs(i - at) for i in hits) / 12)


def _candidates(
    ranked: list[_Sentence], question: str, kind: str, exclude: Sequence[str] = ()
) -> list[tuple[float, str, _Sentence]]:
    """Short-answer spans of the top sentences, best first: of the asked type, not named by the question."""
    asked = _all_stems(question) | {_stem(w) for e in exclude for w in _NAME_WORD.findall(e.casefold())}
    noun = _stem(asked_noun(question)) if kind not in ("date", "number") else ""
    found: dict[str, tuple[float, str, _Sentence]] = {}
    for rank, sentence in enumerate(ranked[:4]):
        spans = _spans(sentence.text, kind)
        for order, span in enumerate(spans):
            words = [w for w in _NAME_WORD.findall(span.casefold()) if w not in _STOP] or [span.casefold()]
            if all(_stem(w) in asked for w in words):
                continue
            if kind == "person" and len(span.split()) < 2:
                bonus = -0.05
            else:
                bonus = 0.0
            if kind == "place" and re.search(rf"\b(?:in|at|from|near)\s+{re.escape(span)}", sentence.text):
                bonus += 0.05
            bonus += 0.1 * _nearness(sentence.text, span, asked)
            if noun and noun in _all_stems(span):
                bonus += 0.15  # "what county": "Fairfax County"
            score = sentence.score - 0.08 * rank - 0.01 * order + bonus
            key = span.casefold()
            if key in found:  # named by several good sentences
                score = max(score, found[key][0]) + (0.05 if sentence.score >= 0.5 * ranked[0].score else 0.0)
            found[key] = (score, span, sentence if key not in found else found[key][2])
    return sorted(found.values(), key=lambda t: -t[0])
