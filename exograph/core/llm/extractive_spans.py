"""The extractive reader's short answers (exograph/core/llm/extractive.py): the type of answer a question asks
for (a person, place, date, number, name, nationality) and the spans of that type in the best sentences. Pure."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from exograph.core.llm.extractive_asked import (
    _NOUN_TYPES,
    _PLACE_NOUNS,
    asked_noun,
    asked_object,
    asked_verb,
    asks_measure,
    head_noun,
    measure_asked,
    what_verb,
)
from exograph.core.llm.extractive_figures import (
    _ASKS_START,
    _CHANGE,
    _DIMENSION,
    _MONEY,
    _MONEY_STEMS,
    _SHARE,
    _TIME_OR_LENGTH,
    _TIMES,
    _UNIT_NEEDED,
    _WEEKDAY,
    COUNTED,
    _counted_nouns,
    _counts_other,
    _is_sum,
    _move_end,
    _no_figure,
    figure_aspect,
    sized_noun,
    with_times,
)
from exograph.core.llm.extractive_kinds import (
    _ROLES,
    _apposed,
    _role_before,
    _spans,
    _type_of,
    asked_role,
    ends_in_noun,
    expected_types,
    people_label,
    role_bound,
    same_noun,
)
from exograph.core.llm.extractive_referents import _personal, resolved
from exograph.core.llm.extractive_roles import (
    _AUXILIARY,
    _ROLE_OF,
    _agent,
    _before_asked_noun,
    _converse_doer,
    _converse_subject,
    _defines,
    _doers,
    _does_itself,
    _named_elsewhere,
    _object_of,
    _objects,
    _predicates,
    _says_verb,
    _subjects,
    _titled,
    _undergoes,
    act_asked,
    closing_verb,
    date_end,
    doer_verb,
    role_owner,
)
from exograph.core.llm.extractive_text import (
    _DATE,
    _NAME_WORD,
    _STOP,
    _UNITS,
    BORN,
    DIED,
    FAMILY_STEMS,
    _all_stems,
    _end_of_life,
    _found,
    _nearness,
    _Sentence,
    _stem,
    family_words,
    names_in,
)

_SETTLEMENTS = frozenset("city town village hamlet suburb island river county country region".split())
_SETTLEMENT_STEMS = frozenset(_stem(noun) for noun in _SETTLEMENTS | {"state", "province", "district"})
_GENERIC = _PLACE_NOUNS | frozenset(_NOUN_TYPES) | frozenset("mount saint st port cape bay point".split())
TYPE_MATCH = 0.15  # a span the NER gives the asked type gains this (tuned on HotpotQA dev, bench/chat.py)
TYPE_MISMATCH = 0.3  # a span the NER gives another type loses this
DEFINED = 0.15  # a span a sentence defines as the asked noun ("X was an American actor") gains this
ROLE_OTHER = 0.1  # a span a sentence names by another role than the asked noun ("the novelist X") loses this
DEEPER_SENTENCES = 10  # how far down the ranking a name of the asked type is sought when the best hold none
SAID = 0.15  # a common-noun phrase the evidence writes where the question asks (after its verb, defined as its noun)
MEASURED = 0.25  # a number the sentence gives as "<the asked quantity> of N" ("a pressure of 8 bar") gains this
UNIT_MATCH = 0.15  # a number written with a unit of measure gains this for "how much/long/far/..." questions
WHO_PERSON = 0.1  # a person gains this over a body for "who" (a body stays a candidate: "who distributes ...")
QUESTION_HEAD = 0.1  # a span whose head word the question uses ("the lighthouse": "Marlowe Lighthouse") loses this
AGENT = 0.25  # "built by Tarvik Works" for "who manufactured ...": the doer of the question's verb gains this
ROLE_REVERSED = 0.15  # "Meridian Rail runs trains between X and Y" for "who runs Meridian Rail": its spans lose this
SUBJECT = 0.1  # for "who", the name opening its sentence (its subject, the doer) gains this over the names after it
ASPECT = 0.15  # "when did the trial finish": a date the sentence gives its end gains this, its start loses it
UNSAID = 0.1  # for "who <verb>s", a name whose sentence never says the verb's relation family loses this
CANDIDATE_SENTENCES = 4  # the best sentences whose spans are candidates (6 and 8 measured: equal on dev and validation)


Fill = Callable[[Sequence[_Sentence]], None]  # reads the typed names of sentences not read yet


def _candidates(
    ranked: list[_Sentence],
    question: str,
    kind: str,
    exclude: Sequence[str] = (),
    fill: Fill | None = None,
    typed_by: dict[str, int] | None = None,
) -> list[tuple[float, str, _Sentence]]:
    """Short-answer spans of the top sentences, best first: of the asked type, not named by the question. With
    the sentences' typed names (fill), a span of the asked NER type gains TYPE_MATCH and one of another type loses
    TYPE_MISMATCH (a person is not the answer to "which city"), and names of the asked type are candidates too.
    typed_by, when given, gets each span's (lower case) type evidence: 1 when something says it is of the asked kind
    (its NER type, a sentence defining it as the asked noun, the noun in its name, the counted noun after it, the
    object of the question's verb), -1 when something says it is of another, 0 when nothing says either."""
    asked = _all_stems(question) | {_stem(w) for e in exclude for w in _NAME_WORD.findall(e.casefold())}
    noun = _stem(asked_noun(question)) if kind not in ("date", "number") else ""
    wanted = expected_types(question, kind) if fill is not None else frozenset()
    if fill is not None:
        fill(ranked[:CANDIDATE_SENTENCES])
    durational = re.search(r"\bhow (?:old|long)\b", question.casefold())
    measure = kind == "number" and asks_measure(question)
    # "how much dried kelp did they sell": the kelp's measure, not a sum, whatever the verb
    how_much_of = re.search(rf"\bhow much\s+(?!(?:{'|'.join(_AUXILIARY)})\b)([a-z-]+)", question.casefold())
    money = (
        measure
        and (how_much_of is None or how_much_of.group(1) in ("money", "cash"))
        and re.search(
            r"\b(?:pay(?:s|ing)?|paid|cost(?:s|ing)?|price|spen[dt](?:s|ing)?|charg(?:e[sd]?|ing)|sold|sell(?:s|ing)?|"
            r"buy(?:ing)?|bought|earn(?:s|ed|ing)?|rais(?:e[sd]?|ing))\b",
            question.casefold(),
        )
    ) or (kind == "number" and bool(_MONEY_STEMS & _all_stems(question)) and not _CHANGE.search(question))
    money = money and not _SHARE.search(question)  # "what share of sales": a percentage is the answer
    counted = COUNTED.search(question.casefold())
    # "how many flats will have affordable rents": a count of flats, whatever sum the question names after it
    money = money and not (counted and counted.group(1) not in _MONEY and _stem(counted.group(1)) not in _MONEY_STEMS)
    measure = measure or bool(money)  # "what is the cheapest ticket price": "25 pounds", with its unit
    unit_needed = _UNIT_NEEDED.search(question) is not None or (kind == "number" and measure_asked(question))
    dimension = _DIMENSION.search(question) is not None
    far = re.search(r"\bhow\s+far\b", question, re.IGNORECASE) is not None  # a distance (or the time it takes)
    sized = sized_noun(question)
    described = head_noun(question) if kind not in ("date", "number") else ""
    verb, doer = (asked_object(question), what_verb(question)) if kind == "name" else ("", "")
    named = [_NAME_WORD.findall(name.casefold()) for name in names_in(question)]
    # the answer stands near what the question asks (its verbs and nouns), not near the name it asks about, which
    # a sentence may name anywhere ("Harbour Lights, a play by X, stars Y" for "who stars in Harbour Lights")
    near_words = asked - {_stem(w) for n in named for w in n}
    if kind == "date":  # "when is it open on Saturdays": the day is no name asked about, the hours beside it answer
        near_words |= {_stem(day.casefold()) for day in _WEEKDAY.findall(question)}
    # a word of the question's relation family stands for it ("will employ 140 people" for "how many staff")
    near_words |= {stem for index in family_words(question) for stem in FAMILY_STEMS[index]}
    doing = asked_verb(question) if kind in ("person", "name") else None
    who_verb = doer_verb(question) if kind == "person" else ""
    # "Which screenwriter worked on it?": the asked noun names an act ("written by X") whatever the question's verb
    role_act = act_asked(question, described) if kind == "person" else ""
    whose = _ROLE_OF.match(question) if kind == "person" else None
    role_asked = asked_role(question) if kind == "person" else ""  # "Who is the club treasurer?"
    closing = closing_verb(question) if kind not in ("date", "number") else ""
    # "who pays for it": a sentence that never says paying (or funding) names someone else ("released by X")
    who_family = family_words(who_verb) if who_verb else set()
    found: dict[str, tuple[float, str, _Sentence]] = {}
    typed_ok = False
    life = family_words(question) & {BORN, DIED} if kind == "date" else set()

    def read(rank: int, sentence: _Sentence, only_wanted: bool) -> None:
        nonlocal typed_ok
        types = sentence.types or {}
        spans = _spans(sentence.text, kind, measure)
        if kind == "date" and _WEEKDAY.search(question):  # "open on Saturdays": the hours, not another day
            spans = [span for span in spans if not _WEEKDAY.search(span)]
        if kind == "date" and re.search(r"\bwhen\s+(?:is|are)\b.*\b(?:open|closed)\b", question, re.I):
            spans = [span for span in spans if not re.fullmatch(r"\d{4}", span)]  # when it is open: no year it opened
        if kind == "date":
            # "at what time do we meet": a time of day, never "699" of "699 metres"; "when is it open": a date or
            # the hours it gives ("from 10am to 2pm")
            spans = with_times(question, sentence.text, spans)
        # "After Varenne's death she directed the laboratory": she (the passage's subject) did it
        pronoun_subject = kind == "person" and bool(sentence.about) and _personal(sentence.text)
        if pronoun_subject and sentence.about.casefold() not in {s.casefold() for s in spans}:
            spans = [*spans, sentence.about]
        said: dict[str, None] = {}
        objects: list[str] = []
        if kind == "name":
            # a common noun may be the answer: what the evidence writes after the question's verb, the subject it
            # defines as the asked noun ("Drifting is a driving technique" for "what technique"), or what does the
            # asked verb (_doers); in the order written, so that spans of equal score keep one order run to run
            objects = list(dict.fromkeys(_objects(sentence.text, verb, asked) if verb else []))
            said = dict.fromkeys(
                [*objects, *_subjects(sentence.text, described), *_predicates(sentence.text, described)]
                + _doers(sentence.text, doer)
            )
            spans = spans + [p for p in said if p.casefold() not in {x.casefold() for x in spans}]
        if wanted and kind not in ("number", "date"):
            extra = [name for name, t in types.items() if t in wanted]
            spans = spans + [
                m for m in _original(sentence.text, extra) if m.casefold() not in {x.casefold() for x in spans}
            ]
        for order, span in enumerate(spans):
            words = [w for w in _NAME_WORD.findall(span.casefold()) if w not in _STOP] or [span.casefold()]
            # "Texas Tech University" for "the Texas Tech Raiders represented what university": a name of the asked
            # noun the question never writes, whatever words it shares with the question
            unwritten = bool(noun) and _stem(words[-1]) == noun and span.casefold() not in question.casefold()
            if all(_stem(w) in asked for w in words) and not unwritten:
                continue  # the question's own name
            if any(len(n) > 1 and n[0] == words[0] and n[-1] == words[-1] for n in named):
                continue  # "Giuseppe Edoardo Arimondi" for the question's "Giuseppe Arimondi": its subject, not an answer
            if any(len(n) == 1 and len(words) > 1 and words[-1] == n[0] for n in named) and kind != "place":
                continue  # "Sami Koivu" for the question's "Koivu": whom it asks about
            if any(1 < len(n) < len(words) and words[-len(n) :] == n for n in named):
                continue  # "Valdmora Maritime Museum" for the question's "Maritime Museum": the thing asked about
            if (
                any(_stem(w) in asked for w in words)
                and all(_stem(w) in asked or w in _GENERIC for w in words)
                and not unwritten
            ):
                continue  # "River Tavy" for "the mouth of the Tavy": the question's own name with a common noun
            if (
                kind not in ("number", "date")
                and len(span) <= 3
                and re.search(rf"\d\s?{re.escape(span)}\b", sentence.text)
            ):
                continue  # "a 4.0 Ah battery", "16 GB of memory": a unit after its number, never a name
            if noun in _SETTLEMENT_STEMS and re.fullmatch(r"[A-Z]{1,3}-?\d+(?:[-–][A-Z]{0,3}\d+)?", span):
                continue  # "(F4-F5) tornado" for "what county": a code of letters and digits names no county or town
            if kind == "place" and _WEEKDAY.search(span):
                continue  # "on Tuesdays and Thursdays": when, never where
            if span.isupper() and re.match(rf"{re.escape(span)},\s+(?:{_DATE.pattern})\s*[—–-]", sentence.text):
                continue  # "LEEDS, 3 March 2026 — Fernhill Foods ...": a news dateline, where it was written
            if kind == "place" and re.search(
                rf"\b(?:in|at|from|near)\s+[A-Z][\w'’.-]*,\s+(?:in|near)\s+{re.escape(span)}\b", sentence.text
            ):
                continue  # "quarried at Bonawe, in Argyll": Argyll says where Bonawe is; Bonawe is the answer
            if (
                kind == "number"
                and re.fullmatch(r"1\d{3}|20\d{2}", span)
                and (_type_of(span, types) == "DATE" or _end_of_life(sentence.text, span, {BORN}))
            ):
                continue  # "set up in 2014" for "how many staff", "(1891-1967)" for "how old": a year is no count or age
            if kind == "number" and _no_figure(sentence.text, span):
                continue  # "opened on 3 May 1998", "ring 01225 830 211", "7 Tanner Street": no count or sum
            end_of_life = _end_of_life(sentence.text, span, life) if life else 0
            if end_of_life < 0:
                continue  # "(1891-1967)": 1891 is not when she died, 1967 not when she was born
            # "the Kiln Road ground" for "the name of the ground": the name written before the asked noun
            names_noun = bool(noun) and re.search(rf"\b{re.escape(span)}\s+{noun}", sentence.text, re.I) is not None
            if kind not in ("date", "number") and _before_asked_noun(sentence.text, span, question) and not names_noun:
                continue  # "the Kelburn memorial" for "who carved the memorial": the thing asked about, not its answer
            if (
                fill is not None
                and kind not in ("number", "date")  # "Two site reliability engineers start ...": a count
                and " " not in span
                and sentence.text.startswith(span)
                and not _type_of(span, types)
                and not _named_elsewhere(span, ranked)
            ):
                continue  # "Minutes of the parish council": a capital the sentence's start gives, no name the NER knows
            typed = _type_of(span, types) if wanted else ""
            if (
                kind == "person"
                and typed == "ORGANIZATION"
                and re.search(
                    rf"\b(?:in|on|near|off|(?:north|south|east|west)(?:-?(?:east|west))?\s+of)\s+{re.escape(span)}",
                    sentence.text,
                )
            ):
                typed = "LOCATION"  # "off Skelly Point", "on Skerry Head": a place the NER took for a body
            if kind == "person" and typed != "PERSON" and any(_defines(sentence.text, span, n) for n in _SETTLEMENTS):
                typed = "LOCATION"  # "Portleven is a village at the mouth of ...": a place whatever the NER says
            # "Authors: X and Y, University of Tartu": the people listed (the NER's organisation is none)
            listed = people_label(sentence.text, span) if kind == "person" and typed != "ORGANIZATION" else ""
            if kind == "person" and typed != "PERSON" and (_titled(sentence.text, span) or listed):
                typed = "PERSON"  # "the engineer Agnes Vireo": a person whatever the NER says
            # "Harlow Works, the oldest museum", "the Nuremberg firm Lehmann" for "which company"
            apposed = bool(described) and (
                _apposed(sentence.text, span, described) or same_noun(_role_before(sentence.text, span), described)
            )
            defined = apposed or (bool(described) and _defines(sentence.text, span, described))
            if wanted and typed not in wanted and ((noun and noun in _all_stems(span)) or apposed):
                # "River Noe" for "which river": the name's own noun types it, whatever the NER says; so does the
                # sentence calling it one ("Harlow Works, the oldest working museum in Essex")
                typed = min(wanted)
            if only_wanted and typed not in wanted:
                continue
            if (
                kind in ("person", "name")
                and (who_verb or doing)
                and _undergoes(sentence.text, span, who_verb or (doing[0] if doing else ""))
            ):
                continue  # "Northmark Yards, founded in 1871" for "who founded X": what was founded, never its founder
            if (
                kind == "person"
                and typed != "PERSON"
                and re.search(rf"\b(?:at|in|near)\s+(?:the\s+)?{re.escape(span)}\b", sentence.text)
            ):
                continue  # "sings at the Harbour Church" for "who founded the choir": where, never who
            if kind == "place" and typed == "PERSON":
                if not re.search(rf"\b(?:in|at|near|from)\s+{re.escape(span)}", sentence.text):
                    continue  # a person is not where: "Margaret Oduya" for "where will the workshop be held"
                typed = "LOCATION"  # "quarried at Bonawe": a place the NER took for a person
            if kind == "place" and re.search(
                rf"\b(?:[a-z]+ed|run|made|built|led|held)\s+by\s+{re.escape(span)}", sentence.text
            ):
                continue  # "a studio run by Ifeoma Adeyemi": the doer of a passive is no where (the NER said a place)
            fits = 1 if kind in ("date", "number") and not wanted else 0  # a date's form is its type
            # "Marlowe Lighthouse" for "who designed the lighthouse": the thing the question asks about
            asked_head = _stem(words[-1]) in asked and words[-1] != described
            # "the Kelburn memorial" for "who carved the memorial": a name before the question's own noun names the
            # thing asked about, as "Marlowe Lighthouse" does
            bonus_head = (
                -QUESTION_HEAD if asked_head and not (typed == "PERSON" or (kind == "person" and not typed)) else 0.0
            )
            if kind == "person" and len(span.split()) < 2:
                bonus = -0.05
            else:
                bonus = 0.0
            if kind == "person" and (
                re.match(rf"{re.escape(span)}\s+[a-z]", sentence.text) or (pronoun_subject and span == sentence.about)
            ):
                bonus += SUBJECT  # "Conrad Lusk joined Kestrel Freight and ran the depot": the doer opens it
            # "born in Tartu", "moved from X to the Corn Exchange", "trained at the Glasgow School of Art": a where, a
            # body or not; "in the National Football League" is a where of less weight (the NER's type stands)
            located = kind == "place" and bool(
                re.search(rf"\b(?:(?:in|at|from|near)|at\s+the)\s+{re.escape(span)}", sentence.text)
                or _move_end(sentence.text, span) > 0
            )
            located_the = kind == "place" and bool(
                re.search(rf"\b(?:in|at|from|near)\s+the\s+{re.escape(span)}", sentence.text)
            )
            if located or located_the:
                bonus += 0.05
            bonus += ASPECT * figure_aspect(question, sentence.text, span, kind)  # "up to 7,500", "about 1540"
            if kind != "date":
                # "moves from Lisbon to Porto", "from 61.2 to 72.4": where it ends is the answer, unless the question
                # asks where it started ("moved from", "the baseline")
                bonus += ASPECT * _move_end(sentence.text, span) * (-1 if _ASKS_START.search(question) else 1)
            measured = re.search(rf"\b([a-z]+)\s+(?:of|is|was)\s+(?:[a-z]+\s+){{0,2}}?{re.escape(span)}", sentence.text)
            if kind == "number" and measured and _stem(measured.group(1)) in near_words:
                bonus += MEASURED  # "a maximum torque of 65 Nm" for "how much torque": not the "1.4 kg" it weighs
            elif sized and re.search(rf"{re.escape(span)}\s+(?:[a-z]+\s+)?{sized}\b", sentence.text):
                bonus += MEASURED  # "a 10 percent annual bonus" for "how big is the yearly bonus"
            elif money and measured and {_stem(measured.group(1))} & _MONEY_STEMS:
                bonus -= MEASURED  # "revenue of 410 million pounds" for "how much is it paying": another sum
            genitive = re.search(rf"{re.escape(span)}['’]\s+([a-z]+)(?:\s+([a-z]+))?", sentence.text)
            if kind == "number" and genitive and {_stem(w) for w in genitive.groups() if w} & near_words:
                bonus += MEASURED  # "on six months' written notice" for "how much notice"
            bonus += 0.1 * _nearness(sentence.text, span, near_words)
            if noun and (noun in _all_stems(span) or names_noun):
                bonus += 0.15  # "what county": "Fairfax County"; "the name of the ground": "the Kiln Road ground"
                fits = 1
            if noun and re.search(
                rf"\b{noun}\w*\s+(?:in|at|near|on|of)\s+(?:the\s+)?{re.escape(span)}\b", sentence.text
            ):
                bonus -= ROLE_OTHER  # "the second highest waterfall in Scotland" for "what waterfall": where it is
            if wanted:
                if typed in wanted or (located and typed == "ORGANIZATION"):
                    # "born in Tartu" is a place whatever the NER says of Tartu (it takes some towns for bodies)
                    bonus += TYPE_MATCH
                    if kind == "person" and typed == "PERSON":
                        bonus += WHO_PERSON  # "who" may ask for a body, but most often asks for a person
                    typed_ok = True
                    fits = 1
                elif typed and not (kind == "number" and typed == "DATE" and durational):
                    bonus -= TYPE_MISMATCH  # a year is not a count, but "21 years" is an age
                    fits = -1
            unit = span.rsplit(" ", 1)[1].casefold() if " " in span else ""
            if re.fullmatch(r"[\d.,]+[x×]", span):
                unit = "times"  # "30x": a ratio, measured as "30 times" is
            if counted and not money and counted.group(1) not in _MONEY and _is_sum(sentence.text, span):
                continue  # "how many works": not the "25 pounds" the catalogue costs
            if money and not unit and _counts_other(sentence.text, span):
                continue  # "how much does it cost": not "two" of "two million users"
            if money and (span[:1] in "$£€¥" or unit in _MONEY):
                bonus += UNIT_MATCH  # "what was revenue": "$4.2 million", not the "12%" it rose by
            elif money and not unit and re.search(rf"[A-Z][\w-]*\s+{re.escape(span)}\b", sentence.text):
                continue  # "Tallowdb 4.0 was released": a version after a name, never a price
            elif money and (unit in _UNITS or span.endswith("%")):
                continue  # "how much did they pay", "what is its price": not "two weeks", nor "38%" of something
            elif far and unit in _UNITS and unit not in _TIME_OR_LENGTH:
                continue  # "how far is the farm": "two miles", never the "4 pounds" a bottle costs
            elif dimension and unit in _TIMES:
                continue  # "how high is the waterfall": not the "six hours" the walk to it takes
            elif measure and unit in _UNITS and not (durational and unit not in _TIME_OR_LENGTH):
                bonus += UNIT_MATCH  # "how long": "eighteen months" over a bare count, never "4.0 Ah"
            elif unit_needed and "-" not in span and _counts_other(sentence.text, span, money=False):
                continue  # "how long is the viaduct": never "two" of "the two towns", a count of things
            elif unit_needed:
                bonus -= UNIT_MATCH  # "how long did the trial last": not "sixty" (of "adults over sixty")
            if counted and re.search(
                rf"{re.escape(span)}\s+(?:[\w-]+\s+)?(?:{_counted_nouns(counted.group(1))})",
                sentence.text,
                re.IGNORECASE,
            ):
                bonus += 0.2  # "how many countries": "more than 70 countries"
                fits = 1
            elif counted and _counts_other(sentence.text, span, money=False):
                bonus -= UNSAID  # "how many contributors": not "two" of "two million users"
            bound = role_bound(sentence.text, span) if role_asked else ""  # "the treasurer is Raj Patel"
            if bound and bound in _ROLES | {role_asked}:
                bonus += DEFINED if _stem(bound) == _stem(role_asked) else -ROLE_OTHER
            if defined or (described and ends_in_noun(span, described)):
                bonus += DEFINED  # "George Raft (born ...) was an American film actor" for "which ... actor"; the
                # name's own noun is the asked one: "the Tideway Sculling Association" for "which association"
                fits = 1
            elif described:
                role = _role_before(sentence.text, span)
                if role and same_noun(role, described):
                    bonus += DEFINED  # "the actor Declan Ormsby" for "which actor"
                    fits = 1
                elif role:
                    bonus -= ROLE_OTHER  # "the novelist Ida Warne" is not the actor asked for
                    fits = -1
            if end_of_life > 0:
                bonus += TYPE_MATCH  # the end of a life's span the question asks for: a date of the asked kind
                fits = 1
            elif kind == "date":
                bonus += ASPECT * date_end(question, sentence.text, span)  # "when did it finish": not when it began
            if span in said:
                bonus += SAID + (
                    SAID if span in objects else 0.0
                )  # what the evidence says was bought, for "bought what"
                fits = 1
            owner = role_owner(sentence.text, span, sentence.about) if whose else None
            if owner is not None and whose is not None:
                # "Fernhill's chief executive, X" for "Who is Fernhill's boss?"; not "Its chief executive, Y" of another
                bonus += AGENT if _found(whose.group(1), owner) or _found(owner, whose.group(1)) else -ROLE_OTHER
            if closing and _object_of(sentence.text, span, closing):
                bonus += SAID  # "visit the Blue John Cavern" for "which cave will they visit"
            if who_verb and not _says_verb(resolved(sentence.text, sentence.about), who_verb, who_family):
                bonus -= UNSAID
            elif role_act and not who_verb and not _says_verb(sentence.text, role_act, family_words(role_act)):
                bonus -= UNSAID  # "Who was the architect of X?" over a sentence saying no designing of it
            if who_verb and _converse_doer(sentence.text, span, who_verb):
                bonus += AGENT  # "bought it from Trinity House" for "who sold it"
            elif who_verb and _converse_subject(sentence.text, span, who_verb):
                bonus -= ROLE_REVERSED  # "The trust owns it" for "who sold it": the buyer
            agent = False
            if doing is not None:
                agent = _agent(sentence.text, span, doing[0])
                if not agent and _does_itself(sentence.text, doing):
                    bonus -= ROLE_REVERSED
            elif who_verb:
                agent = _agent(sentence.text, span, who_verb)  # "a single supplier for motors, Kessel Drives"
            if not agent and listed:
                acts = family_words(listed.removesuffix("s"))  # "Authors:" for "who wrote"
                agent = bool(acts & (who_family or family_words(role_act)))
            if not agent and role_act:
                agent = _agent(sentence.text, span, role_act)  # "written by X" for "which screenwriter ..."
            if agent:
                bonus += AGENT
                if fits < 0:  # the sentence says it is the doer: the NER's type for it ("a place") was wrong
                    bonus += TYPE_MISMATCH
                    fits = 0
            score = sentence.score - 0.08 * rank - 0.01 * order + bonus + bonus_head
            key = span.casefold()
            if key in found:  # named by several good sentences
                score = max(score, found[key][0]) + (0.05 if sentence.score >= 0.5 * ranked[0].score else 0.0)
            found[key] = (score, span, sentence if key not in found else found[key][2])
            if typed_by is not None:
                typed_by[key] = max(typed_by.get(key, -1), fits)

    for rank, sentence in enumerate(ranked[:CANDIDATE_SENTENCES]):
        read(rank, sentence, False)
    if wanted and not typed_ok and fill is not None and len(ranked) > CANDIDATE_SENTENCES:
        # None of the best sentences names a thing of the asked type: the next ones may ("which man ...").
        deeper = ranked[CANDIDATE_SENTENCES:DEEPER_SENTENCES]
        fill(deeper)
        for rank, sentence in enumerate(deeper, start=CANDIDATE_SENTENCES):
            read(rank, sentence, True)
    return sorted(found.values(), key=lambda t: -t[0])


def _original(text: str, names: Sequence[str]) -> list[str]:
    """names (lower case) as text writes them."""
    out = []
    for name in names:
        at = text.casefold().find(name)
        if at >= 0:
            out.append(text[at : at + len(name)])
    return out
