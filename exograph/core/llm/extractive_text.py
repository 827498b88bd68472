"""The extractive reader's text handling (exograph/core/llm/extractive.py): sentences, names, stems, the
patterns of dates and numbers, and the relation families a question's verb is matched by. Pure."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from exograph.core.llm.extractive_verbs import _IRREGULAR

_SENTENCE = re.compile(
    r"(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bSt\.)(?<!\bJr\.)(?<!\bSr\.)(?<!\bMrs\.)(?<!\bNo\.)(?<!\bvs\.)"
    r"(?<!\b[A-Z]\.)(?<=[.!?])\s+(?=[A-Z0-9\"'(])"
)
_WORD = re.compile(r"[^\W_]{3,}")
_STOP = frozenset(
    "the and for are was were with that this from what which who whom whose when where why how does did "
    "has have had into about over than then them they their there its his her our you your not but can "
    "tell me give list show any all some".split()
)
# Words a question uses to ask, not to name what it asks about (left out of its content terms).
_ASKING = frozenset(
    "name named called is be been being also both same either one ones many much long old year years "
    "kind type first will would shall should could might must going".split()  # modal and future forms ask, not name
)
_OPENERS = frozenset(
    "the a an however but and so then also in on at for this that these those it its there their our we my your "
    "i you he she they yes no according based both each every some many most when while although if "
    "after before since as by from with who whom whose what which where why how is are was were do does "
    "did can could has have had will would should his her under during since until among across through "
    "despite without within between following unlike upon throughout approximately roughly about around aside "
    "apart besides excluding including exactly nearly almost originally initially currently because though once "
    "unless whether meanwhile moreover furthermore thus hence yet still only even".split()
)
_CONNECTORS = frozenset("of de del della der van von la le du da di y and & the for on upon".split())
_MONTHS = (
    "January|February|March|April|May|June|July|August|September|October|November|December|"
    "Jan\\.?|Feb\\.?|Mar\\.?|Apr\\.?|Jun\\.?|Jul\\.?|Aug\\.?|Sep\\.?|Sept\\.?|Oct\\.?|Nov\\.?|Dec\\.?"
)
_DATE = re.compile(
    rf"\b(?:(?:{_MONTHS})\s+\d{{1,2}},?\s+\d{{3,4}}|\d{{1,2}}\s+(?:{_MONTHS})\s+\d{{3,4}}|(?:{_MONTHS})\s+\d{{3,4}}|"
    rf"\d{{1,2}}\s+(?:{_MONTHS})(?!\w)|(?:{_MONTHS})\s+\d{{1,2}}(?![\d,])|"  # a day with no year: "on 12 April"
    rf"(?:(?<=\bin\s)|(?<=\bby\s)|(?<=\buntil\s)|(?<=\bbefore\s)|(?<=\beach\s)|(?<=\bevery\s))"
    rf"(?:{_MONTHS})(?!\s*\d)|"  # "close in June", "pressed each October"
    r"(?<![\d.,])\d{3,4}(?:s)?(?![\d.,]\d))\b"
)
_NUMBER = re.compile(
    r"(?<![\w.])\d(?:[\d,]*\d)?(?:\.\d+)?(?:\s+(?:million|billion|thousand|hundred|percent|per cent)|\s?%|[x×])?(?![\w%])"
    r"|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|"
    r"seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred)\b",
    re.IGNORECASE,
)
# Units of measure (time, length, area, mass, volume, money, share, temperature, pressure, speed): a closed class.
_UNITS = frozenset(
    "second seconds minute minutes hour hours day days week weeks month months year years decade decades century "
    "centuries mm cm m metre metres meter meters km kilometre kilometres kilometer kilometers mile miles foot feet "
    "inch inches yard yards acre acres hectare hectares g kg gram grams kilogram kilograms tonne tonnes ton tons "
    "pound pounds lb lbs ounce ounces litre litres liter liters ml gallon gallons percent % degree degrees mmhg "
    "bar psi kpa hpa atm knots mph nm rpm ah mah kwh kw mw hz khz mhz ghz db gb mb tb ms millisecond milliseconds microsecond "
    "microseconds volt volts watt watts amp amps euro euros dollar dollars yen franc francs crowns kronor rupees pence "
    "cents times".split()
)
# "1.3 million cubic metres", "two and a half hours"
_MEASURE = re.compile(r"(?:\s+and\s+a\s+half)?(?:\s+|-)(?:of\s+an?\s+)?((?:cubic|square)\s+)?([A-Za-z%]+)")
_CALENDAR = re.compile(
    rf"(?:{_MONTHS}|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|Thus|Set|U\.S|US|UK)(?:\s+\d+)?",
    re.IGNORECASE,
)
# A nationality or demonym, also hyphenated ("Bangladeshi-British"): never a person's name.
_NATIONALITY = re.compile(r"^[A-Z][a-z]+(?:an|ish|ese|ian|ic|ch|i)(?:-[A-Z][a-z]+(?:an|ish|ese|ian|ic|ch|i))*$")
_TOKEN = re.compile(r"[\w'’.&-]+(?:\+\+|#(?!\w))?|[^\w\s]", re.UNICODE)  # "C++", "F#" are one name
_RELATIVE = re.compile(r"\b(that|which|who|whom|whose|where)\b", re.IGNORECASE)
_WH = ("who", "whom", "whose", "what", "which", "where", "when", "why", "how")
_YESNO = re.compile(r"^(is|are|was|were|do|does|did|can|could|has|have|had|will|would|should)\b", re.IGNORECASE)

# Verbs that say one link in other words: a question's relation matches a sentence holding any word of its
# family. Small and documented on purpose; embeddings (when given) do the rest.
RELATION_FAMILIES: tuple[frozenset[str], ...] = tuple(
    frozenset(words.split())
    for words in (
        "own owns owned owner owners owning acquire acquired acquires acquisition bought buy buys purchase "
        "purchased parent subsidiary took takeover belong belongs belonged proprietor proprietors",
        "make makes made maker manufacture manufactures manufactured manufacturer produce produces produced "
        "producer build builds built builder assemble assembled fabricates fabricated construct constructs constructed "
        "construction contractor erect erected",
        "start started starts found founded founder founders establish established create created "
        "launch launched co-founded cofounded",
        "head heads headed lead leads led leader direct directs directed director chief ceo chair chairs "
        "chaired run runs ran manage manages managed manager president operate operates operated operator boss "
        "govern governs governed governor mayor",
        "sell sells sold seller market markets marketed distribute distributes distributed retail retails "
        "vendor supplies supplied supplier",
        "fund funds funded funding finance finances financed pay pays paid sponsor sponsors sponsored backer "
        "backed bankroll bankrolled cover covers covered",
        "design designs designed designer architect plan plans planned draw drew drawn drafted",
        "donate donates donated donation donor donors gift gifted bequeath bequeathed",
        "born birth birthplace native",
        "die died death",
        "close closed closes closure shut defunct dissolved liquidated disband disbands disbanded disbanding "
        "scrap scrapped demolish demolished",
        "wrote write writes written author authors authored writer penned screenwriter screenwriters screenplay co-wrote co-written "
        "co-writer",
        "stars starred starring co-stars co-starred co-starring",
        "play plays played player member members joined belong belongs belonged",
        "marry married spouse wife husband",
        "locate located based headquartered headquarters situated lies host hosts hosted home",
        "employ employs employed employing employee employees employer employers staff workforce headcount worker workers",
        "population inhabitants inhabitant inhabited inhabit residents populous live lives",
        "twin twins twinned twinning sister",
        "replace replaced replaces succeed succeeded succeeds successor predecessor preceded",
        "transport transports transported carry carries carried haul hauls hauled ship ships shipped convey conveyed",
        "participate participates participated participant participants enrol enrols enrolled enroll enrolls "
        "enrolment recruit recruits recruited",
    )
)


Similarity = Callable[[str, Sequence[str]], list[float]]
# The typed names of each text (name, type), types as the offline extractor's NER gives them (PERSON, ORGANIZATION,
# LOCATION, DATE, QUANTITY, WORK, EVENT, PRODUCT, CONCEPT for a nationality); None when no model is loaded.
EntityTypes = Callable[[Sequence[str]], list[list[tuple[str, str]]] | None]


MEANING_ALONE, MEANING_ALONE_MIN = 0.6, 0.45  # (a sentence meaning less is not read as a paraphrase)


@dataclass
class _Sentence:
    n: int
    text: str
    position: int
    words: float = 0.0
    meaning: float = 0.0
    about: str = ""  # the passage's subject when the sentence opens with a pronoun ("He worked ..."), else ""
    types: dict[str, str] | None = None  # its typed names, lower case name -> type (EntityTypes), once read

    @property
    def score(self) -> float:
        # meaning alone may carry a sentence that shares no word with the question ("Payment is due by 15 May" for
        # "the last day for paying"): at least MEANING_ALONE of its meaning, from MEANING_ALONE_MIN. Replayed: articles
        # EM 79.7 -> 81.0, notes round C 59.3 -> 61.0; held-out round D holds 67.7 -> 71.0 % (EM equal); HotpotQA,
        # near-topic and off-topic refusals unchanged.
        if self.meaning <= 0:
            return self.words
        alone = MEANING_ALONE * self.meaning if self.meaning >= MEANING_ALONE_MIN else 0.0
        return max(0.5 * self.words + 0.5 * self.meaning, alone)


@lru_cache(maxsize=65536)  # the reader's hottest call: the same words come back sentence after sentence
def _stem(word: str) -> str:
    word = word.casefold()
    word = _IRREGULAR.get(word, word)
    for suffix in ("ations", "ation", "ings", "ing", "ers", "ies", "ied", "ed", "es", "er", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            stem = word[: -len(suffix)]
            if suffix in ("ing", "ings", "ed", "er", "ers") and stem[-1] == stem[-2] and stem[-1] not in "lsz":
                stem = stem[:-1]  # a doubled consonant before the ending: "planned", "planner" -> "plan"
            return stem + "y" if suffix in ("ies", "ied") else stem  # "studied", "studies" -> "study"
    return word[:6]


def _terms(text: str) -> set[str]:
    return {word for word in _WORD.findall(text.casefold()) if word not in _STOP}


def _stems(text: str) -> set[str]:
    return {_stem(word) for word in _terms(text) if word not in _ASKING}


def sentences_of(text: str) -> list[str]:
    """A text's sentences (evidence snippets may start or end mid-sentence; ellipses are stripped)."""
    text = " ".join(text.replace("…", " ").split())
    return [part.strip() for part in _SENTENCE.split(text) if part.strip()]


_HEADING_LINE = re.compile(r"^[ \t]*#{1,6}[ \t].*$", re.M)


def whole_sentences(text: str) -> list[str]:
    """A passage's complete sentences: a snippet's cut first and last pieces, headings and table-like rows left out.

    A blank line ends a sentence (a heading or a caption is never glued to the paragraph after it), and a markdown
    heading line, or a paragraph of one unpunctuated line among others, is a title, not a sentence."""
    stripped = text.strip()
    paragraphs = [
        " ".join(block.split()) for block in re.split(r"\n\s*\n", _HEADING_LINE.sub("\n\n", stripped)) if block.strip()
    ]
    parts: list[str] = []
    for index, paragraph in enumerate(paragraphs):
        # Table cells are pieces of their own (never glued to the sentence before them).
        pieces = [p.strip() for cell in re.split(r"\s*\|\s*", paragraph) for p in _SENTENCE.split(cell) if p.strip()]
        if pieces and index == 0 and stripped.startswith("…"):
            pieces = pieces[1:]
        last = index == len(paragraphs) - 1
        if pieces and ((last and stripped.endswith("…")) or pieces[-1][-1:] not in ".!?\"')"):
            # cut mid-way, or a title: kept only when it is all the passage holds
            pieces = pieces[:-1] if len(pieces) > 1 or len(paragraphs) > 1 or stripped.endswith("…") else pieces
        parts.extend(pieces)
    out = []
    for index, part in enumerate(parts):
        part = part.strip("… ").strip()
        if len(part) < 12 or len(part) > 400 or "|" in part or "\t" in part:
            continue
        if index and re.fullmatch(r"\(?\d{1,2}[.)]", parts[index - 1].strip()) and len(part.split()) <= 4:
            continue  # "2. Incident review.": a numbered item's title, not a sentence
        if len(re.findall(r"\d", part)) > 0.3 * len(part):
            continue
        out.append(part)
    return out


def names_in(text: str) -> list[str]:
    """Runs of capitalised words (joined by of/de/van/...), numbers and dates; the first word of a sentence
    counts only when it is not a common opener."""
    tokens = _TOKEN.findall(text)
    runs: list[str] = []
    current: list[str] = []

    def close() -> None:
        while current and current[-1].casefold() in _CONNECTORS:
            current.pop()
        while current and current[0].casefold() in _OPENERS:
            current.pop(0)
        if current:
            runs.append(" ".join(current).strip(".,"))
        current.clear()

    for index, token in enumerate(tokens):
        starts = index == 0 or tokens[index - 1] in '.!?"“(:;'
        capital = (
            token[:1].isupper()
            or (token[:1].isdigit() and any(ch.isalpha() for ch in token))
            or re.fullmatch(r"[a-z]{1,2}[A-Z][\w-]*", token) is not None  # "mDPR", "iPhone", "eBay"
        )
        if capital and not (starts and token.casefold() in _OPENERS):
            current.append(token)
        elif (
            current
            and token.casefold() in _CONNECTORS
            and index + 1 < len(tokens)
            and tokens[index + 1][:1].isupper()
            and not _CALENDAR.fullmatch(tokens[index + 1])  # "Clinton on October 28": a name, then a date
        ):
            current.append(token)
        else:
            close()
    close()
    return [
        run
        for run in dict.fromkeys(runs)
        if run and any(ch.isalpha() for ch in run) and not _CALENDAR.fullmatch(run) and run.casefold() not in _OPENERS
    ]


_NAME_WORD = re.compile(r"[^\W_]+(?:[-'’][^\W_]+)*")


@lru_cache(maxsize=4096)
def _all_stems(text: str) -> frozenset[str]:
    words = _NAME_WORD.findall(text.casefold())
    joined = [part for w in words if "-" in w or "'" in w or "’" in w for part in re.split(r"[-'’]", w)]
    return frozenset(_stem(w) for w in words) | frozenset(_stem(p) for p in joined)


def _found(name: str, text: str) -> bool:
    """Every word of name (stemmed; a possessive 's dropped) occurs in text, or name is an acronym of words the text
    writes out ("CFO" in "chief financial officer")."""
    words = [
        re.sub(r"['’]s$", "", w) for w in _NAME_WORD.findall(name.casefold()) if w not in _STOP and w not in _CONNECTORS
    ]
    have = _all_stems(text)
    return (bool(words) and all(_stem(w) in have for w in words)) or bool(spelled(name, text))


def _named(key: str, text: str) -> bool:
    """The question's name is in text; a one-word name ("Brand", the play) only where text writes it with a capital
    (text writing only "a beer brand" does not name it)."""
    if not _found(key, text):
        return False
    if " " in key or not key[:1].isupper() or len(key) < 2:
        return True
    bare = re.sub(r"['’]s?$", "", key)  # "Noor's job": Noor; "the Harriers' vests": Harriers
    return re.search(rf"\b{re.escape(bare[0])}(?i:{re.escape(bare[1:])})", text) is not None


_ACRONYM = re.compile(r"[A-Z]{2,6}")


def _written_out(key: str, text: str) -> bool:
    """The text writes key in another form: an acronym (or its plural) written out ("SREs" over "two site reliability
    engineers"), or the place of a demonym: a capitalised word opening with the first four letters of its stem
    ("Scotland" for "the tallest Scottish lighthouse", "Norway" for "Norwegian", "Japan" for "Japanese")."""
    acronym = re.fullmatch(r"([A-Z]{2,6})s?", key)
    if acronym is not None:
        return bool(spelled(acronym.group(1), text))
    head = re.sub(r"(?:an|ish|ese|ian|ic|ch|i)$", "", key)[:4] if _NATIONALITY.fullmatch(key) and "-" not in key else ""
    return len(head) == 4 and re.search(rf"\b{head}[a-z]*\b", text) is not None


def spelled(acronym: str, text: str) -> str:
    """The words text writes acronym out in ("chief financial officer" for CFO), or ""."""
    if not _ACRONYM.fullmatch(acronym):
        return ""
    letters = acronym.casefold()
    words = [m for m in re.finditer(r"[A-Za-z][\w'’-]*", text) if m.group(0).casefold() not in _CONNECTORS]
    initials = "".join(m.group(0)[0].casefold() for m in words)
    at = initials.find(letters)
    return text[words[at].start() : words[at + len(letters) - 1].end()] if at >= 0 else ""


def _question_keys(question: str) -> list[str]:
    """The question's names and figures (what the evidence must be about)."""
    keys = [name for name in names_in(question) if name.casefold() not in _WH]
    keys.extend(m.group(0) for m in _NUMBER.finditer(question) if any(ch.isdigit() for ch in m.group(0)))
    return list(dict.fromkeys(keys))


def _family_match(query: str, sentence: str) -> float:
    """1.0 when the query and the sentence share a relation family, else 0."""
    asked = set(_WORD.findall(_phrasal(query)))
    said = set(_WORD.findall(_phrasal(_LIFE.sub(" (born died) ", sentence))))
    return 1.0 if any(asked & family and said & family for family in RELATION_FAMILIES) else 0.0


def _word_match(wanted: set[str], sentence: str, family: float, acronyms: Sequence[str] = ()) -> float:
    """The share of the question's words (stems) the sentence holds, an acronym counting when the sentence writes it
    out ("CFO": "chief financial officer"), and half a word for a shared relation family."""
    if not wanted:
        return 0.0
    have = _stems(sentence) | {a.casefold() for a in acronyms if spelled(a, sentence)}
    return min(1.0, (len(wanted & have) + 0.5 * family) / len(wanted))


# Families that say one link from its two ends: who owns X / who X was sold to.
_OWN, _SELL = 0, 4
BORN, DIED = (RELATION_FAMILIES.index(next(f for f in RELATION_FAMILIES if word in f)) for word in ("born", "died"))
CONVERSE = {_OWN: _SELL, _SELL: _OWN}
# A link another family's sentence says too: where a thing was founded says where it was based ("set up in 2014 ...
# in Salford" for "where was it based?"); a purchase or a sale says what was paid ("bought it for 4,200 euros" for
# "how much did she pay?").
_FOUNDED, _BASED, _PAID = (
    RELATION_FAMILIES.index(next(f for f in RELATION_FAMILIES if w in f)) for w in ("founded", "based", "paid")
)
SAYS_ALSO = {_BASED: {_FOUNDED}, _PAID: {_OWN, _SELL}}
# Said in passing about a person or a place ("Patrick, employed as a waiter, ..."): matches a question asking it, but
# never counts as another relation than the asked one.
_IN_PASSING = {
    RELATION_FAMILIES.index(next(f for f in RELATION_FAMILIES if w in f))
    for w in ("employ", "enrolled", "inhabitants", "twinned")
}
FAMILY_STEMS = tuple(frozenset(_stem(word) for word in family) for family in RELATION_FAMILIES)


# Phrasal verbs that say a family's link in two words ("was set up by X" says who founded it).
_PHRASAL = (
    (re.compile(r"\bset(?:s|ting)?\s+up\b"), " founded "),
    # a separated particle, as questions put it: "who set the café up", "who got it going", "when was it put up"
    (re.compile(r"\bset(?:s|ting)?\s+((?:[\w'’-]+\s+){1,5}?)up\b"), r" founded \1"),
    (re.compile(r"\b(?:get|gets|got|getting)\s+((?:[\w'’-]+\s+){1,5}?)going\b"), r" founded \1"),
    (re.compile(r"\b(?:put|puts|putting)\s+((?:[\w'’-]+\s+){0,5}?)up\b"), r" built \1"),
    (re.compile(r"\b(?:pass(?:ed|es)?|passing)\s+away\b"), " died "),
    (re.compile(r"\b(?:took|takes?|taken|taking)\s+over\s+from\b"), " succeeded "),  # a post, from a person
    # a post or a team taken over is led ("took over the project in 2022"), a firm taken over is acquired
    (
        re.compile(
            r"\b(?:took|takes?|taken|taking)\s+over\s+(?:(?:the|a|an|his|her|their|its)\s+)?(?:project|role|post|"
            r"team|leadership|helm|job|position|club|side|squad|orchestra|choir|department|unit)\b"
        ),
        " led ",
    ),  # fmt: skip
    (re.compile(r"\b(?:took|takes?|taken|taking)\s+over\b"), " acquired "),
    (re.compile(r"\b(?:took|takes?|taken|taking)\s+part\b"), " participated "),
    (re.compile(r"\b(?:break|breaks|broke|broken|breaking|split|splits|splitting)\s+up\b"), " disbanded "),
    (re.compile(r"\bclose\s+(?:to|by)\b"), " near "),
    # a span of time, not a firm run: "the trip will run from 12 May to 14 May", "the show runs until June"
    (
        re.compile(r"\b(?:run|runs|ran|running)\s+(?=(?:from|until|till|through|between)\b)"),
        " lasts ",
    ),  # the adjective: "a village close to Leeds" says no closure
)
# "Ada Treloar (1891-1967)": a life's span says when the person was born and when they died. It is read as saying
# those links (a question asking one of them is matched to it), never as another link than the asked one (a
# biography's first sentence gives the span whatever else it says).
_LIFE = re.compile(r"\(\s*(?:c\.\s*)?[\w ,.]*?\d{3,4}\s*[-–—]\s*(?:c\.\s*)?[\w ,.]*?\d{3,4}\s*\)")


def _phrasal(text: str) -> str:
    text = text.casefold()
    for pattern, verb in _PHRASAL:
        text = pattern.sub(verb, text)
    return text


def family_stems(text: str) -> set[int]:
    """The relation families (their index in RELATION_FAMILIES) a text says in any form of their words, phrasal
    verbs included ("set up" says founded)."""
    stems = {_stem(word) for word in _WORD.findall(_phrasal(_NAME_TAIL.sub(_first_word, text)))}
    return {index for index, family in enumerate(FAMILY_STEMS) if stems & family}


# A run of capitalised words is a name: its later words name, they do not say a link ("the Nordbyte Foundation" says
# nothing was founded, "Bluewake Shipping" nothing was shipped), except a role's noun ("its Managing Director").
_NAME_TAIL = re.compile(r"\b[A-Z][\w'’.&-]*(?:\s+[A-Z][\w'’&-]*)+")
_ROLE_NOUNS = frozenset(
    "director chief president chair chairman chairwoman manager founder owner head leader ceo".split()
)


def _first_word(run: re.Match[str]) -> str:
    first, *rest = run.group(0).split()
    return " ".join([first, *(w for w in rest if w.casefold() in _ROLE_NOUNS)])


def life_families(text: str) -> set[int]:
    """{BORN, DIED} when text gives a life's span "(1891-1967)", else nothing."""
    return {BORN, DIED} if _LIFE.search(text) else set()


def says_another_relation(asked: set[int], named: set[int], text: str) -> bool:
    """Whether a text says a relation family (RELATION_FAMILIES' index) the question does not name and none of the
    asked ones: "Ilse Marendt was born in Graz in 1971" for "When did Joaquim Reis die?" (asked: die; said: born),
    "the design work was carried out by Arup" for "Who owns Arup?". `named` are all the question's families (a
    chain's first link says one of them, and that is not another relation). A relation and its converse are one
    ("the press was sold to X" says who bought it)."""
    said = family_stems(text)
    asked = asked - _IN_PASSING  # employment is said in many ways ("became head of sculpture at X")
    asked = asked | {CONVERSE[i] for i in asked if i in CONVERSE} | {j for i in asked for j in SAYS_ALSO.get(i, ())}
    other = said - _IN_PASSING - named - {CONVERSE.get(i, -1) for i in named}
    return bool(asked) and not asked & said and bool(other)


def names_the_subject(question: str, passage: str) -> bool:
    """Whether a passage names what the question names (a word of one of its names; figures aside), or the
    question names nothing. A sentence often names its subject by a description ("the garden", "the company's")
    or a pronoun its passage resolves, so the passage, not the sentence, must name it."""
    words = {
        word
        for key in _question_keys(question)
        if not key[:1].isdigit()
        for word in key.split()
        if word.casefold() not in _CONNECTORS
    }
    return not words or any(_found(word, passage) or _written_out(word, passage) for word in words)


def family_words(text: str) -> set[int]:
    """The relation families (their index in RELATION_FAMILIES) a text names by one of their listed words (a
    question's: "former" is not "formed")."""
    return {RELATION_FAMILIES.index(family) for family in _families(text)}


def _families(text: str) -> list[frozenset[str]]:
    words = set(_WORD.findall(_phrasal(text)))
    return [family for family in RELATION_FAMILIES if words & family]


def _measured(sentence: str, number: re.Match[str]) -> str:
    """The number with the unit of measure written after it ("340 tonnes", "7 mmHg", "eighteen months"), or ""."""
    unit = _MEASURE.match(sentence, number.end())
    if unit is None or unit.group(2).casefold() not in _UNITS:
        return ""
    return sentence[number.start() : unit.end()]  # as written: "340 tonnes", "a four-mile stretch" -> "four-mile"


def _nearness(sentence: str, span: str, asked: frozenset[str] | set[str]) -> float:
    """1.0 when span stands next to a word the question uses, falling to 0 at 12 words away. A clause joiner between
    them ("built in 1871 and automated in 1987": "and") counts as CLAUSE_GAP words: the span belongs to its own
    clause's verb, so for "when was it automated" 1987 is nearer than 1871."""
    words = _NAME_WORD.findall(sentence.casefold())
    first = _NAME_WORD.findall(span.casefold())[:1]
    if not first or first[0] not in words:
        return 0.0
    at = words.index(first[0])
    hits = [i for i, w in enumerate(words) if _stem(w) in asked and w not in _STOP]
    if not hits:
        return 0.0

    def distance(i: int) -> int:
        low, high = sorted((i, at))
        return high - low + CLAUSE_GAP * sum(w in _JOINERS for w in words[low + 1 : high])

    return max(0.0, 1.0 - min(distance(i) for i in hits) / 12)


CLAUSE_GAP = 3
_JOINERS = frozenset("and but while whereas then".split())


def _end_of_life(sentence: str, span: str, asked: set[int]) -> int:
    """Whether span is an end of a life's span "(A - B)": 1 the end the question asks for (its start for "when was X
    born", its end for "when did X die"), -1 the other end, 0 neither."""
    start = re.search(rf"\(\s*(?:c\.\s*)?{re.escape(span)}\s*[-–—]", sentence) is not None
    end = re.search(rf"[-–—]\s*(?:c\.\s*)?{re.escape(span)}\s*\)", sentence) is not None
    if (start and asked == {BORN}) or (end and asked == {DIED}):
        return 1
    return -1 if start or end else 0
