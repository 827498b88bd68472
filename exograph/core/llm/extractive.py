"""The `extractive` provider: no network, no generation. It reads the question, checks that the evidence
answers it, and answers with a short answer first (a name, date or number copied from the evidence, or
yes/no for a comparison) followed by the whole evidence sentences that hold it, each cited [n]. When the
evidence does not answer, it says so plainly and names what the closest passages are about. Every word
of an answer is copied from its evidence, so it never states a figure the evidence lacks. Pure: the
caller passes an optional `similarity(query, texts)` (cosine of sentence embeddings) to match meaning.

The steps (each documented where it is):
  * relevance (`relevance_of`): does the evidence cover the question? The question's names and figures
    must be found in the evidence (at least half of them), and the best sentence must match the question
    by words and meaning above RELEVANCE_MIN. Below that the answer is a refusal (`answered` False).
  * the chain (`_follow_chain`): a question with a nested part ("the company that makes X", "the mother of
    the director of Y") is split in an inner part (what names X) and an outer part (what is asked about the
    thing X leads to). The sentence best matching the inner part names a bridge the question does not
    name; a sentence naming the bridge that matches the outer part's relation gives the far end.
    Relations are matched by meaning: embeddings when given, plus RELATION_FAMILIES, a small map of verbs
    that say the same link in other words (owns/acquired, makes/manufactured, ...).
  * the short answer (`_candidates`): spans of the best sentences of the type the question asks for
    (who: a name, when: a date, how many: a number, where: a place), not named by the question.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

NO_ANSWER = "The graphs do not hold an answer to this question."
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
    "kind type first".split()
)
_OPENERS = frozenset(
    "the a an however but and so then also in on at for this that these those it its there their our we "
    "i you he she they yes no according based both each every some many most when while although if "
    "after before since as by from with who whom whose what which where why how is are was were do does "
    "did can could has have had will would should his her".split()
)
_CONNECTORS = frozenset("of de del della der van von la le du da di y and & the for on upon".split())
_MONTHS = (
    "January|February|March|April|May|June|July|August|September|October|November|December|"
    "Jan\\.?|Feb\\.?|Mar\\.?|Apr\\.?|Jun\\.?|Jul\\.?|Aug\\.?|Sep\\.?|Sept\\.?|Oct\\.?|Nov\\.?|Dec\\.?"
)
_DATE = re.compile(
    rf"\b(?:(?:{_MONTHS})\s+\d{{1,2}},?\s+\d{{3,4}}|\d{{1,2}}\s+(?:{_MONTHS})\s+\d{{3,4}}|(?:{_MONTHS})\s+\d{{3,4}}|"
    r"(?<![\d.,])\d{3,4}(?:s)?(?![\d.,]\d))\b"
)
_NUMBER = re.compile(
    r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?:\s+(?:million|billion|thousand|hundred|percent|per cent))?(?![\w])"
    r"|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred)\b",
    re.IGNORECASE,
)
_CALENDAR = re.compile(
    rf"(?:{_MONTHS}|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|Thus|Set|U\.S|US|UK)(?:\s+\d+)?",
    re.IGNORECASE,
)
# A nationality or demonym, also hyphenated ("Bangladeshi-British"): never a person's name.
_NATIONALITY = re.compile(r"^[A-Z][a-z]+(?:an|ish|ese|ian|ic|ch|i)(?:-[A-Z][a-z]+(?:an|ish|ese|ian|ic|ch|i))*$")
_TOKEN = re.compile(r"[\w'’.&-]+|[^\w\s]", re.UNICODE)
_PRONOUN = re.compile(r"^(he|she|it|they|his|her|its|their)\b", re.IGNORECASE)  # a sentence about its passage's subject
_RELATIVE = re.compile(r"\b(that|which|who|whom|whose|where)\b", re.IGNORECASE)
_WH = ("who", "whom", "whose", "what", "which", "where", "when", "why", "how")
_YESNO = re.compile(r"^(is|are|was|were|do|does|did|can|could|has|have|had|will|would|should)\b", re.IGNORECASE)

# Verbs that say one link in other words: a question's relation matches a sentence holding any word of its
# family. Small and documented on purpose; embeddings (when given) do the rest.
RELATION_FAMILIES: tuple[frozenset[str], ...] = tuple(
    frozenset(words.split())
    for words in (
        "own owns owned owner owners owning acquire acquired acquires acquisition bought buy buys purchase "
        "purchased parent subsidiary took takeover",
        "make makes made maker manufacture manufactures manufactured manufacturer produce produces produced "
        "producer build builds built builder assemble assembled fabricates fabricated",
        "start started starts found founded founder founders establish established create created "
        "launch launched co-founded cofounded",
        "head heads headed lead leads led leader direct directs directed director chief ceo chair chairs "
        "chaired run runs ran manage manages managed manager president",
        "sell sells sold seller market markets marketed distribute distributes distributed retail retails "
        "vendor supplies supplied supplier",
        "born birth birthplace native",
        "die died death",
        "wrote write writes written author authored writer penned",
        "play plays played player member joined",
        "marry married spouse wife husband",
        "locate located based headquartered headquarters situated lies host hosts hosted home",
    )
)
RELEVANCE_MIN = 0.3  # the best sentence's match below which the evidence does not answer (tuned, bench/chat.py)
NAME_COVERAGE_MIN = 0.5  # share of the question's names and figures the evidence must hold
MEANING_POOL = 8  # sentences embedded per question (the most words in common with it first)
CHAIN_MIN = 0.25
CONFIDENT_MARGIN = 0.1  # the short answer's lead over the next candidate at which it is taken as sure (tuned)  # the second link's match to the outer relation below which the chain is not followed

Similarity = Callable[[str, Sequence[str]], list[float]]


@dataclass(frozen=True)
class Statement:
    """One numbered evidence item as the extractive model reads it."""

    n: int
    text: str
    kind: str = "passage"
    source: str = ""


@dataclass
class Extracted:
    """The extractive answer: text as shown, whether the evidence answers, the short answer, and why."""

    text: str
    answered: bool
    short: str = ""
    relevance: float = 0.0
    chain: list[int] = field(default_factory=list)
    confidence: float = 1.0  # how sure the short answer is (0.5..1): its lead over the next candidate
    sentences: list[tuple[int, str]] = field(default_factory=list)  # the cited whole sentences, (n, text)


@dataclass
class _Sentence:
    n: int
    text: str
    position: int
    words: float = 0.0
    meaning: float = 0.0
    about: str = ""  # the passage's subject when the sentence opens with a pronoun ("He worked ..."), else ""

    @property
    def score(self) -> float:
        return self.words if self.meaning <= 0 else 0.5 * self.words + 0.5 * self.meaning


def _stem(word: str) -> str:
    word = word.casefold()
    for suffix in ("ations", "ation", "ings", "ing", "ers", "ies", "ied", "ed", "es", "er", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word[:6]


def _terms(text: str) -> set[str]:
    return {word for word in _WORD.findall(text.casefold()) if word not in _STOP}


def _stems(text: str) -> set[str]:
    return {_stem(word) for word in _terms(text) if word not in _ASKING}


def sentences_of(text: str) -> list[str]:
    """A text's sentences (evidence snippets may start or end mid-sentence; ellipses are stripped)."""
    text = " ".join(text.replace("…", " ").split())
    return [part.strip() for part in _SENTENCE.split(text) if part.strip()]


def whole_sentences(text: str) -> list[str]:
    """A passage's complete sentences: a snippet's cut first and last pieces and table-like rows left out."""
    raw = " ".join(text.split())
    # Table cells are pieces of their own (never glued to the sentence before them).
    parts = [part.strip() for block in re.split(r"\s*\|\s*", raw) for part in _SENTENCE.split(block) if part.strip()]
    if parts and raw.startswith("…"):
        parts = parts[1:]
    if parts and (raw.endswith("…") or parts[-1][-1:] not in ".!?\"')"):
        parts = parts[:-1] if len(parts) > 1 or raw.endswith("…") else parts
    out = []
    for part in parts:
        part = part.strip("… ").strip()
        if len(part) < 12 or len(part) > 400 or "|" in part or "\t" in part:
            continue
        digits = sum(ch.isdigit() for ch in part)
        if digits > 0.3 * len(part):
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
        capital = token[:1].isupper() or (token[:1].isdigit() and any(ch.isalpha() for ch in token))
        if capital and not (starts and token.casefold() in _OPENERS):
            current.append(token)
        elif (
            current and token.casefold() in _CONNECTORS and index + 1 < len(tokens) and tokens[index + 1][:1].isupper()
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
    return frozenset(_stem(w) for w in words) | frozenset(_stem(p) for w in words for p in re.split(r"[-'’]", w))


def _found(name: str, text: str) -> bool:
    """Every word of name (stemmed; a possessive 's dropped) occurs in text."""
    words = [
        re.sub(r"['’]s$", "", w) for w in _NAME_WORD.findall(name.casefold()) if w not in _STOP and w not in _CONNECTORS
    ]
    have = _all_stems(text)
    return bool(words) and all(_stem(w) in have for w in words)


def _question_keys(question: str) -> list[str]:
    """The question's names and figures (what the evidence must be about)."""
    keys = [name for name in names_in(question) if name.casefold() not in _WH]
    keys.extend(m.group(0) for m in _NUMBER.finditer(question) if any(ch.isdigit() for ch in m.group(0)))
    return list(dict.fromkeys(keys))


def _family_match(query: str, sentence: str) -> float:
    """1.0 when the query and the sentence share a relation family, else 0."""
    asked = {w for w in _WORD.findall(query.casefold())}
    said = {w for w in _WORD.findall(sentence.casefold())}
    return 1.0 if any(asked & family and said & family for family in RELATION_FAMILIES) else 0.0


def _word_match(wanted: set[str], sentence: str, family: float) -> float:
    if not wanted:
        return 0.0
    have = _stems(sentence)
    return min(1.0, (len(wanted & have) + 0.5 * family) / len(wanted))


def _score(sentences: list[_Sentence], query: str, similarity: Similarity | None) -> list[_Sentence]:
    wanted = _stems(query)
    scored = [
        _Sentence(s.n, s.text, s.position, _word_match(wanted, s.text, _family_match(query, s.text)), about=s.about)
        for s in sentences
    ]
    if similarity is not None and scored:
        # Only the MEANING_POOL sentences sharing most words with the query are embedded (the reader's cost).
        pool = sorted(scored, key=lambda s: (-s.words, s.position))[:MEANING_POOL]
        for sentence, value in zip(pool, similarity(query, [s.text for s in pool]), strict=True):
            sentence.meaning = max(0.0, float(value))
    return sorted(scored, key=lambda s: (-s.score, s.position))


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


def relevance_of(question: str, ranked: list[_Sentence], evidence_text: str) -> float:
    """How well the evidence covers the question (0..1): the best sentence's match, zero when fewer than
    NAME_COVERAGE_MIN of the question's names and figures occur in the evidence."""
    if not ranked:
        return 0.0
    keys = _question_keys(question)
    if keys:
        covered = sum(1 for key in keys if _found(key, evidence_text)) / len(keys)
        if covered < NAME_COVERAGE_MIN:
            return 0.0
    return round(ranked[0].score, 3)


def _cite(numbers: Sequence[int]) -> str:
    return "[" + ", ".join(str(n) for n in dict.fromkeys(numbers)) + "]"


def _line(sentence: str, n: int) -> str:
    body = sentence.rstrip()
    end = body[-1] if body[-1] in ".!?" else "."
    return f"{body.rstrip('.!?')} [{n}]{end}"


def _refusal(question: str, statements: Sequence[Statement], ranked: list[_Sentence]) -> str:
    q = " ".join(question.strip().rstrip("?").split())
    first = q.split()[0].casefold() if q else ""
    what = f"{first}{q[len(first) :]}" if first in _WH else f"the answer to “{q}?”"
    text = f"Your documents don't say {what}."
    closest: list[tuple[str, int]] = []
    by_n = {s.n: s for s in statements}
    for sentence in ranked[:6]:
        item = by_n.get(sentence.n)
        topic = (item.source if item else "") or next(iter(names_in(sentence.text)), "")
        if topic and topic.casefold() not in {t.casefold() for t, _ in closest}:
            closest.append((topic, sentence.n))
        if len(closest) >= 2:
            break
    if closest:
        topics = " and ".join(topic for topic, _ in closest)
        text += f" The closest passages are about {topics} {_cite([n for _, n in closest])}."
    return text


def _families(text: str) -> list[frozenset[str]]:
    words = set(_WORD.findall(text.casefold()))
    return [family for family in RELATION_FAMILIES if words & family]


def _follow_chain(
    question: str, sentences: list[_Sentence], kind: str, ranked: list[_Sentence]
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
    best: tuple[float, str, list[_Sentence]] | None = None
    for rank, first in enumerate(ranked[:3]):
        named = f"{first.text} {first.about}"
        if first.words <= 0 or (asked_names and not any(_found(name, named) for name in asked_names)):
            continue  # the first link names what the question names (itself, or by a pronoun for its passage's)
        first_families = _families(first.text)
        open_families = [f for f in question_families if f not in first_families]
        family_words = {_stem(w) for f in question_families for w in f}
        remaining = question_stems - _stems(first.text) - family_words
        wanted = len(remaining) + len(open_families)
        if not wanted or not open_families and not remaining:
            continue
        bridges = [b for b in names_in(first.text) if not b.isdigit() and not any(_found(b, a) for a in asked_names)]
        for bridge in bridges[:4]:
            for second in sentences:
                if second.text == first.text or not _found(bridge, second.text):
                    continue
                hits = len(remaining & _stems(second.text)) + sum(
                    1 for f in open_families if f in _families(second.text)
                )
                if kind in ("place", "date", "number") and _spans(second.text, kind):
                    hits += 1  # a where/when/how-many question is answered by a span of that type
                match = hits / wanted
                if hits == 0 or match < CHAIN_MIN:
                    continue
                spans = _candidates([second], question, kind, exclude=[bridge, *asked_names])
                if not spans:
                    continue
                total = match + 0.5 * first.score - 0.05 * rank
                if best is None or total > best[0]:
                    best = (total, spans[0][1], [second, first])
    if best is None:
        return None
    return best[1], best[2]


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
    names = [n for n in names_in(question) if n.casefold() not in _WH]
    if len(names) < 2:
        return ""
    asked = _stems(question) - {_stem(w) for n in names for w in _WORD.findall(n.casefold())}
    per_name: list[set[str]] = []
    for name in names[:2]:
        holding = [s for s in ranked if _found(name, s.text)]
        per_name.append(set().union(*(_stems(s.text) for s in holding[:2])) & asked if holding else set())
    return "yes" if per_name[0] & per_name[1] or (not asked) else "no"


def extract_answer(
    *,
    question: str,
    statements: Sequence[Statement],
    similarity: Similarity | None = None,
    max_sentences: int = 2,
    answer_type: str | None = None,
) -> Extracted:
    """The short answer and its cited whole sentences, or a plain refusal when the evidence does not answer.
    `answer_type` "manner" asks for the best sentences only (no short answer, no chain): research findings."""
    sentences: list[_Sentence] = []
    seen: set[str] = set()
    for position, statement in enumerate(statements):
        if statement.kind in ("entity", "fact", "relation"):
            continue  # labels and triples are evidence shown as facts, never rendered as prose
        wholes = whole_sentences(statement.text)
        lead = next(iter(names_in(wholes[0])), "") if wholes else ""
        for text in wholes:
            key = text.casefold()
            if key not in seen:
                seen.add(key)
                about = lead if _PRONOUN.match(text) else ""
                sentences.append(_Sentence(statement.n, text, position, about=about))
    ranked = _score(sentences, question, similarity)
    evidence_text = " ".join(s.text for s in statements)
    relevance = relevance_of(question, ranked, evidence_text)
    if relevance < RELEVANCE_MIN:
        return Extracted(text=_refusal(question, statements, ranked), answered=False, relevance=relevance)
    kind = answer_type or _answer_type(question)
    either = _either(question, ranked) if " or " in question and kind not in ("number", "manner") else None
    chain = (
        _follow_chain(question, sentences, kind, ranked) if kind not in ("yesno", "manner") and either is None else None
    )
    if either is not None:
        chain = None
    short = ""
    margin = 1.0
    support: list[_Sentence]
    if either is not None:
        short, support = either
    elif chain is not None:
        short, support = chain
    else:
        support = [ranked[0]]
        if kind == "yesno":
            short = _yes_no(question, ranked)
            names = [n for n in names_in(question) if n.casefold() not in _WH]
            for name in names[:2]:
                hit = next((s for s in ranked if _found(name, s.text)), None)
                if hit is not None and hit not in support:
                    support.append(hit)
        elif kind != "manner":
            spans = _candidates(ranked, question, kind)
            if spans:
                short, where = spans[0][1], spans[0][2]
                margin = spans[0][0] - (spans[1][0] if len(spans) > 1 else 0.0)
                support = [where] + [s for s in ranked[:1] if s is not where]
    for extra in ranked:
        if len(support) >= max_sentences or extra.score < relevance * 0.6:
            break
        if extra not in support:
            support.append(extra)
    lines = [_line(s.text, s.n) for s in support]
    numbers = [s.n for s in support]
    if short:
        holders = [s.n for s in support if short.casefold() in s.text.casefold()] or numbers
        if chain is not None or kind == "yesno" or either is not None:
            holders = numbers  # a chain's answer rests on every link; a comparison on both sides
        head = f"{short[:1].upper()}{short[1:]} {_cite(holders)}."
        text = " ".join([head, *lines])
    else:
        text = " ".join(lines)
    return Extracted(
        text=text,
        answered=True,
        short=short,
        relevance=relevance,
        chain=[s.n for s in support[:2]] if chain is not None else [],
        # A short answer with a close runner-up is a guess: half sure at no margin, sure from CONFIDENT_MARGIN.
        confidence=round(min(1.0, 0.5 + 0.5 * margin / CONFIDENT_MARGIN), 3),
        sentences=[(s.n, s.text) for s in support],
    )


def evidence_relevance(
    *, question: str, statements: Sequence[Statement], similarity: Similarity | None = None
) -> float:
    """relevance_of over statements' whole sentences (any provider's evidence): 0..1."""
    sentences = [
        _Sentence(s.n, text, position)
        for position, s in enumerate(statements)
        if s.kind not in ("entity", "fact", "relation")
        for text in whole_sentences(s.text)
    ]
    ranked = _score(sentences, question, similarity)
    return relevance_of(question, ranked, " ".join(s.text for s in statements))


def extractive_answer(
    *,
    question: str,
    evidence: Sequence[tuple[int, str]],
    max_sentences: int = 3,
    on_token: Callable[[str], None] | None = None,
    similarity: Similarity | None = None,
) -> str:
    """The answer text of `extract_answer` over plain (n, text) evidence, streamed to on_token. Pure."""
    result = extract_answer(
        question=question,
        statements=[Statement(n, text) for n, text in evidence],
        similarity=similarity,
        max_sentences=max_sentences,
    )
    if on_token is not None:
        on_token(result.text)
    return result.text
