"""The extractive reader's multi-sentence answers (exograph/core/llm/extractive.py): a two-link chain followed
through a bridge the question does not name, a choice between two options, and yes/no comparisons. Pure."""

from __future__ import annotations

import re

from exograph.core.llm.extractive_asked import asked_noun, asked_object, head_noun
from exograph.core.llm.extractive_figures import _UNIT_NEEDED, COUNTED, _counted_nouns
from exograph.core.llm.extractive_kinds import ends_in_noun
from exograph.core.llm.extractive_referents import _opens_with_pronoun, described_subject
from exograph.core.llm.extractive_roles import _agent, doer_verb
from exograph.core.llm.extractive_spans import (
    CANDIDATE_SENTENCES,
    Fill,
    _candidates,
    _defines,
    _objects,
    _spans,
)
from exograph.core.llm.extractive_text import (
    _NAME_WORD,
    _NATIONALITY,
    _NUMBER,
    _RELATIVE,
    _WH,
    _WORD,
    RELATION_FAMILIES,
    _all_stems,
    _families,
    _found,
    _Sentence,
    _stem,
    _stems,
    names_in,
    says_another_relation,
)

# The second link's match to the outer relation below which the chain is not followed.
CHAIN_MIN = 0.25


def _split_chain(question: str) -> tuple[str, str] | None:
    """(outer, inner) parts of a nested question, or None for a single hop."""
    text = question.strip().rstrip("?")
    for match in _RELATIVE.finditer(text):
        if match.start() > 0 and text[: match.start()].strip().split()[-1:] != [","]:
            outer, inner = text[: match.start()].strip(), text[match.start() :].strip()
            if len(outer.split()) >= 2 and len(inner.split()) >= 2:
                return outer, inner
    ofs = [m.start() for m in re.finditer(r"\bof\b", text)]
    if len(ofs) >= 2:
        cut = ofs[-2]
        return text[:cut].strip(), text[cut + 2 :].strip()
    return None


def _follow_chain(
    question: str,
    sentences: list[_Sentence],
    kind: str,
    ranked: list[_Sentence],
    fill: Fill | None = None,
    typed_by: dict[str, int] | None = None,
) -> tuple[str, list[_Sentence]] | None:
    """The far end of a two-link chain and its two sentences (second link first), or None.

    The first link is a sentence matching the question that names a bridge the question does not name. What
    the question asks beyond that sentence (its words and relation families the first link does not hold)
    must be matched by a second sentence naming the bridge; that sentence's span of the asked type (not the
    bridge, not named by the question) is the far end. A question the first link answers whole is not a chain.
    """
    asked_names = names_in(question)
    question_stems = _stems(question)
    question_families = _families(question)
    named_indices = {RELATION_FAMILIES.index(f) for f in question_families}
    antecedent = _antecedent(question)
    described = head_noun(question)
    verb = asked_object(question) if kind == "name" else ""
    asked = _all_stems(question)
    who = doer_verb(question) if kind == "person" else ""
    best: tuple[float, str, list[_Sentence]] | None = None
    loose: tuple[float, str, list[_Sentence]] | None = None  # second links matched by the bridge alone
    # no nested part ("the court that heard X", "the owner of the maker of"), and not a place: places nest (a mall in
    # Tysons Corner, which is in Fairfax County), so a second sentence may name the larger place asked for
    split = _split_chain(question)
    nested = split is not None
    # a question describing its bridge by a noun ("Who founded the company that owns the ferry operator?"): its
    # outer part asks the second link's relation; the inner part's ("owns the ferry operator") describes the bridge,
    # so a second link saying only that one is no answer (not when the inner part describes the answer itself)
    outer = _families(split[0]) if split is not None and antecedent else []
    flat = not nested and kind != "place"
    counted = COUNTED.search(question.casefold())
    if flat and counted and any(_counts(s.text, counted.group(1)) for s in ranked[:CANDIDATE_SENTENCES]):
        return None  # "Invoices can be sent in 31 currencies" answers "how many currencies" itself: no chain
    for rank, first in enumerate(ranked[:3]):
        named = f"{first.text} {first.about}"
        if first.words <= 0 or (asked_names and not any(_found(name, named) for name in asked_names)):
            continue  # the first link names what the question names (itself, or by a pronoun for its passage's)
        first_families = _families(first.text)
        open_families = [f for f in question_families if f not in first_families]
        open_indices = {RELATION_FAMILIES.index(f) for f in open_families}
        family_words = {_stem(w) for f in question_families for w in f}
        remaining = question_stems - _stems(named) - family_words  # (its pronoun read as whom it means)
        wanted = len(remaining) + len(open_families)
        if not wanted or not open_families and not remaining:
            if rank == 0:
                return None  # the best sentence says all the question asks: one link, not a chain from a worse one
            continue
        if rank == 0 and who and any(_agent(first.text, name, who) for name in names_in(first.text)):
            return None  # "an army ... under Field Marshal X" for "who led the army": the best sentence names the doer
        spans = _candidates([first], question, kind, exclude=asked_names)
        if described and any(ends_in_noun(span, described) for _, span, _ in spans):
            continue  # "Fenn is a member of the Green Party" for "which party ...": it names one of the asked noun, so
            # it is the far end's link (or the answer itself), never the first
        if rank == 0 and not open_families and flat and spans:
            # a flat question whose best sentence says the asked relation (no relation family left open) and
            # holds an answer of the asked kind: only other words are left ("consists of 26 programs" for "how many does it contain"),
            # which a second sentence about one of its names does not answer better
            return None
        # a name holding the question's ("Orrin Therapeutics" for its "Orrin") is what it names, not a bridge from it
        # (a nationality the question names is no name of it: "Australian National University" for "what Australian city")
        # a company's legal form is no part of its name: "Brightwell Appliances Ltd" is "Brightwell Appliances"
        # in the sentence saying where it is based
        bridges = [
            _LEGAL_FORM.sub("", b)
            for b in names_in(first.text)
            if not b.isdigit()
            and not any(_found(b, a) or (_found(a, b) and not _NATIONALITY.fullmatch(a)) for a in asked_names)
        ]
        for bridge in bridges[:4]:
            if described and _defines(first.text, bridge, described):
                continue  # "Tunde Okoro is a jazz singer" for "this jazz singer": the answer itself, not a bridge
            for second in sentences:
                # ("Its chairman is X", "the company was bought": named by its passage's pronoun or noun)
                meant = (
                    second.about
                    if described_subject(second.text) and nested or _opens_with_pronoun(second.text) and antecedent
                    else ""
                )
                if second.text == first.text or not _found(bridge, f"{second.text} {meant}"):
                    continue  # (named, or meant by the noun its passage calls it: "In 2024 the company was bought")
                if described and _defines(second.text, bridge, described):
                    continue  # "George Raft (born George Ranft) was an American actor" for "which actor": the bridge
                    # is the answer, not a link to a name beside it
                if says_another_relation(open_indices, named_indices, second.text):
                    continue  # "Marendt was born in 1971" is not when her husband died
                hits = len(remaining & _stems(second.text)) + sum(
                    1 for f in open_families if f in _families(second.text)
                )
                if kind in ("place", "date", "number") and _spans(second.text, kind):
                    hits += 1  # a where/when/how-many question is answered by a span of that type
                match = hits / wanted
                strict = hits > 0 and match >= CHAIN_MIN
                strict = strict and (not outer or any(f in _families(second.text) for f in outer))
                if not strict and not _is_antecedent(bridge, first.text, antecedent):
                    continue
                spans = _candidates(
                    [second], question, kind, exclude=[bridge, *asked_names], fill=fill, typed_by=typed_by
                )
                if not spans or (verb and spans[0][1] not in _objects(second.text, verb, asked)):
                    continue  # "... secured what": the far end is what the second link says was secured
                if kind == "number" and _UNIT_NEEDED.search(question) and " " not in spans[0][1]:
                    continue  # "how long is the bridge": a length with its unit, never "two" (of "the two cities")
                if kind == "place" and typed_by is not None and typed_by.get(spans[0][1].casefold(), 0) < 0:
                    continue  # the evidence says the far end is no place (a society for "where")
                total = match + 0.5 * first.score - 0.05 * rank + 0.1 * second.score
                if strict and (best is None or total > best[0]):
                    best = (total, spans[0][1], [second, first])
                elif not strict and (loose is None or total > loose[0]):
                    loose = (total, spans[0][1], [second, first])
    # The bridge is what the question describes ("the court that heard X": the Northern Appeals Court), never
    # the answer: when no second link says the asked relation in known words, another sentence naming the
    # bridge with an answer of the asked type is the far end ("... is chaired by Helena Marsh" for "presides").
    best = best or loose
    if best is None:
        return None
    return best[1], best[2]


_LEGAL_FORM = re.compile(r",?\s+(?:Ltd|Limited|Inc|Incorporated|plc|PLC|LLC|LLP|Corp|GmbH|AG|SA|NV|BV)\.?$")


def _antecedent(question: str) -> str:
    """The noun a nested question's inner part describes ("the court" of "who presides over the court that
    heard X", "the port" of "... the port where X is registered"), lower case; "" for a single hop, and when the
    question does not open with its wh-word or the noun is what it asks for ("which man who presented X": the
    inner part describes the answer itself, not a bridge)."""
    split = _split_chain(question)
    if split is None or question.strip().split()[0].casefold() not in _WH:
        return ""
    words = _NAME_WORD.findall(split[0].casefold())
    if not words or words[-1] in _WH or words[-1] == asked_noun(question):
        return ""
    return words[-1]


def _is_antecedent(bridge: str, sentence: str, noun: str) -> bool:
    """The bridge is the thing the question's antecedent noun names: the noun is a word of the bridge ("Northern
    Appeals Court" for "court") or stands just before it in the sentence ("the port of Saltmere", "the bacterium
    Tessaria ovalis")."""
    if not noun or len(noun) < 3:
        return False
    if _stem(noun) in {_stem(w) for w in _NAME_WORD.findall(bridge.casefold())}:
        return True
    before = re.search(
        rf"\b{re.escape(noun)}\w*\s+(?:(?:of|called|named)\s+)?(?:the\s+)?{re.escape(bridge)}", sentence, re.I
    )
    return before is not None


_LATER = re.compile(r"\b(later|last|younger|youngest|newer|newest|recent|recently|after|more recent)\b", re.IGNORECASE)


def _subject(name: str, text: str) -> bool:
    """name's last word is among text's first eight words (the sentence is about it)."""
    words = _NAME_WORD.findall(name.casefold())
    return bool(words) and _stem(words[-1]) in {_stem(w) for w in _NAME_WORD.findall(text.casefold())[:8]}


def _year_after(name: str, text: str) -> int | None:
    """The first year written after name's last word in text (a birth, release or founding year follows the
    name it dates: "Terry Richardson (born August 14, 1965)"), or None."""
    words = _NAME_WORD.findall(name.casefold())
    if not words:
        return None
    last = _stem(words[-1])
    for match in _NAME_WORD.finditer(text):
        if _stem(match.group(0).casefold()) == last:
            year = re.search(r"\b(1\d{3}|20\d{2})\b", text[match.end() :])
            return int(year.group(1)) if year else None
    return None


def _either(question: str, sentences: list[_Sentence]) -> tuple[str, list[_Sentence]] | None:
    """'Which came first, A or B?': the option the evidence favours (by the years beside each option when
    the question compares time, else by the best sentence naming it), with the sentences naming them."""
    text = question.strip()
    match = re.search(r"(?:[,:]|\b(?:between|either))\s*([^,:?]+?)\s+or\s+([^,?]+?)\s*\??$", text) or re.search(
        r"^\w+\s+(.+?)\s+or\s+(.+?)\s*\??$", text
    )
    if match is None:
        return None
    options = []
    for raw in (match.group(1), match.group(2)):
        named = names_in(raw)
        options.append(named[0] if named and raw[:1].islower() is False else raw.strip(" \"'“”"))
    options = [re.sub(r"^(?:the film|the band|the|a|an)\s+", "", o, flags=re.IGNORECASE) or o for o in options]
    found: list[tuple[str, _Sentence | None, int | None]] = []
    for option in options:
        holding = [s for s in sentences if _found(option, s.text)]
        best = max(holding, key=lambda s: s.score) if holding else None
        # The option's own sentences (it is their subject, named in the first words) date it: its earliest year.
        dated = [(y, s) for s in holding if _subject(option, s.text) and (y := _year_after(option, s.text))]
        dated = sorted(dated[:3], key=lambda t: t[0])
        if dated:
            best = dated[0][1]
        found.append((option, best, dated[0][0] if dated else None))
    if all(best is None for _, best, _ in found):
        return None
    temporal = re.search(r"\b(first|earlier|older|oldest|before|born|released|founded|came out|died)\b", question, re.I)
    if temporal and all(year is not None for _, _, year in found):
        later = bool(_LATER.search(question))
        chosen = sorted(found, key=lambda t: t[2] or 0, reverse=later)[0]
    else:
        chosen = max(found, key=lambda t: t[1].score if t[1] else -1.0)
    support: list[_Sentence] = []
    for _, best, _ in [chosen, *found]:
        if best is not None and all(best is not s for s in support):
            support.append(best)
    return chosen[0], support


def _yes_no(question: str, ranked: list[_Sentence]) -> str:
    """yes when every name the question compares is found with the asked terms, else no (comparisons)."""
    q = question.casefold()
    if " or " in q:
        return ""
    names = compared_names(question)
    if len(names) < 2:
        return ""
    asked = _stems(question) - {_stem(w) for n in names for w in _WORD.findall(n.casefold())}
    per_name: list[set[str]] = []
    for name in names[:2]:
        holding = [s for s in ranked if _found(name, s.text)]
        per_name.append(set().union(*(_stems(s.text) for s in holding[:2])) & asked if holding else set())
    return "yes" if per_name[0] & per_name[1] or (not asked) else "no"


def compared_names(question: str) -> list[str]:
    """The names a yes/no question compares: "Are Christopher Nolan and Sathish Kalathil both ...": two names
    (names_in joins them over "and", a connector inside names like "Marks and Spencer")."""
    names = [n for n in names_in(question) if n.casefold() not in _WH]
    split = [part for n in names for part in re.split(r"\s+(?:and|&)\s+", n) if part]
    return split if len(names) < 2 and len(split) >= 2 else names


def _counts(sentence: str, noun: str) -> bool:
    """The sentence gives a count of noun ("31 currencies", "twelve of the flats" for "flats")."""
    return (
        re.search(
            rf"(?:{_NUMBER.pattern})\s+(?:of\s+the\s+)?(?:[\w-]+\s+)?(?:{_counted_nouns(noun)})\b", sentence, re.I
        )
        is not None
    )
