"""The extractive reader's reading of a question (exograph/core/llm/extractive_spans.py): the kind of answer it
asks for (a person, place, date, number, name, nationality, role, yes/no or manner), the noun it asks for ("which
county", "this gospel singer"), the verb it asks the object of ("... secured what") and the verb it asks the doer of
("Who manufactured X?"), with the nouns that type an answer. Pure."""

from __future__ import annotations

import re

from exograph.core.llm.extractive_roles import _ARTICLES
from exograph.core.llm.extractive_text import _IRREGULAR, _STOP, _YESNO, names_in, sentences_of

# What a "what/which <noun>" question's noun says about its answer (the rest are names of that noun's kind).
_PLACE_NOUNS = frozenset(
    "city country state town county place region island river village district province capital location "
    "continent area neighborhood neighbourhood suburb borough municipality nation".split()
)
_DATE_NOUNS = frozenset(
    "year date day month century decade era period timeframe time times hour hours deadline".split()
)
_PERSON_NOUNS = frozenset(
    "person man woman actor actress singer writer author director player politician musician artist "
    "screenwriter producer composer painter poet novelist scientist manager coach driver footballer "
    "king queen president founder leader journalist comedian rapper son daughter father mother brother "
    "sister wife husband".split()
)
_NOT_NOUN = frozenset(
    "is was are were be been did does do has have had can could will would should may might must shall in of on at "
    "from by for that who which whom whose with to and or as than into about during after before under "
    "between among across".split()
)
_PREPOSITIONS = frozenset("to for with against on into about over from after".split())
_PARTICLES = frozenset("after up out over off down".split())
_KIND_OF = frozenset("type kind sort name form genre".split())
# What a "what/which <noun>" question's noun says about the NER type of its answer (the nouns of no listed type
# leave the type open). Types as the offline extractor's NER gives them (documents/extraction/ner.py).
_NOUN_TYPES: dict[str, frozenset[str]] = {
    noun: frozenset(types.split())
    for nouns, types in (
        ("company firm corporation business organization organisation team club band group label university "
         "college school network channel agency party airline brand publisher manufacturer studio franchise "
         "conference league newspaper magazine station institution bank retailer chain charity foundation trust "
         "society association cooperative co-operative union federation council committee ministry department "
         "hospital laboratory lab", "ORGANIZATION"),
        ("film movie album song book novel series show play opera poem painting single programme program "
         "sitcom documentary musical comic", "WORK"),
        ("building stadium bridge airport hotel arena venue museum church castle tower street road park "
         "mountain lake river", "LOCATION"),
        ("airplane aircraft plane car vehicle device ship rifle gun engine console", "PRODUCT"),
        ("war battle festival tournament event competition championship race", "EVENT"),
    )
    for noun in nouns.split()
}  # fmt: skip
# sums of money: "what was revenue", "what were its profits" are answered in a currency
_MONEY_NOUNS = (
    "revenue sales turnover profit income cost price budget salary fee earnings spending loss debt allowance wage "
    "rent fare"
)
_NUMBER_NOUNS = frozenset(
    f"population number amount total count capacity attendance height length weight width depth distance torque "
    f"dimension size volume "
    f"voltage temperature pressure duration latency throughput speed recall precision accuracy {_MONEY_NOUNS}".split()
)


_VERBS = frozenset("star stars play plays won win wins hold holds host hosts make makes own owns lead leads".split())


def _verb_like(word: str) -> bool:
    """A word that ends a noun phrase: an article, a past form ("developed"), or a common verb."""
    return (
        word in _ARTICLES
        or word in _VERBS
        or word in _IRREGULAR  # "which magazine gave it ...": not "it"
        or word in ("it", "them", "him", "us", "me", "you")
        or (len(word) > 4 and word.endswith("ed"))
    )


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
        # "which company runs the servers", "which charity looks after the gardens": a word before an article (or
        # before a verb's particle and an article) is the verb, the noun phrase has ended
        after = [w.casefold() for w in words[index + 1 : index + 3]]
        verb_before = (
            bool(phrase)
            and bool(after)
            and (after[0] in _ARTICLES or (after[0] in _PARTICLES and after[1:2] and after[1] in _ARTICLES))
        )
        if not re.match(r"[\w'’-]+$", word) or low in _NOT_NOUN or (phrase and _verb_like(low)) or verb_before:
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


def _singular(noun: str) -> str:
    return noun[:-1] if len(noun) > 4 and noun.endswith("s") and not noun.endswith("ss") else noun


def head_noun(question: str) -> str:
    """The noun the question asks for: a what/which question's noun, else the noun after "this"/"these" ("has
    worked with this gospel singer"), singular and lower case; the last part of a hyphenated noun
    ("singer-songwriter" -> songwriter); "" when the question names none."""
    noun = asked_noun(question)
    if not noun:
        match = re.search(
            r"\b(?:this|these)\s+((?:[\w-]+\s+){0,3}?)([a-z][\w-]*)\b(?=\s+(?:who|that|which|whose|is|was|"
            r"has|had|did|does|born|from|in|of|with|by|[a-z]+ed)\b|\s*[?,])",
            question,
        )
        noun = match.group(2) if match else ""
    return _singular(noun.split("-")[-1].casefold())


def _answer_type(question: str) -> str:
    """The kind of answer the question asks for; a question of several sentences is typed by its last ("The
    director X has an OBE. Does Y also have one?": yes/no)."""
    parts = sentences_of(question.strip())
    if len(parts) > 1 and parts[-1].rstrip().endswith("?"):
        question = parts[-1]
    question = re.sub(r"^(?:and|but|so)\s+", "", question.strip(), flags=re.IGNORECASE)  # "And who sold it?"
    # "the meal allowance per day": the rate's unit is not what is asked
    question = re.sub(r"\s+(?:per|a|each|every)\s+(?:day|week|month|year|hour|night|person|head)\b", "", question)
    q = question.casefold()
    if _YESNO.match(q):
        return "yesno"
    if re.search(
        r"\bhow (many|much|long|old|far|tall|large|big|heavy|wide|deep|high|fast)\b|\bwhat (number|percentage|amount)\b"
        r"|^what (?:does|did|do|will|would)\b.*\bcost\b",  # "what does the X2 cost?": a sum
        q,
    ):
        return "number"
    bare = re.match(
        r"what (?:is|was|are|were|will be)\s+(?:(?:the|its|their|our|his|her)\s+|[\w-]+['’]s\s+)?([a-z]+)(?:\s+([a-z]+))?",
        q,
    )
    measured = re.search(r"\b([a-z]+)\s+of\s+(?:what|how much)\b", q)  # "with a population of what in 2010?"
    if re.match(r"(?:what|which)\b.*\b(?:maximum|minimum)\b", q):
        return "number"  # "what is the maximum grant": a figure, "up to 7,500 pounds"
    if (
        _singular(asked_noun(question)) in _NUMBER_NOUNS
        or (bare and any(w in _NUMBER_NOUNS or _singular(w) in _NUMBER_NOUNS for w in bare.groups() if w))
        or (measured and _singular(measured.group(1)) in _NUMBER_NOUNS)
    ):
        return "number"  # "what was the population of ...", "what was revenue in the third quarter"
    if re.search(r"\b(?:what|which)\s+colou?rs?\b", q):
        return "colour"  # "What colour is the drill?", "What color clothing do they wear?": "orange"
    if re.match(r"how (?:often|frequently)\b", q):
        return "frequency"  # "How often is rent paid?": "quarterly"
    if re.match(r"(how (do|does|did|is|are|was|were|can|could|should|would|has|have)|why)\b", q):
        return "manner"  # asks how or why: answered by the best sentences, never a name picked out of them
    noun = head_noun(question)
    # The wh-word may open the question or close it ("... a civil war that ended when?").
    last = re.sub(r"[^\w\s]", " ", q).split()[-1:]
    if q.startswith("when") or last == ["when"] or noun in _DATE_NOUNS or re.search(r"\bdate of\b", q):
        return "date"
    if q.startswith("where") or last == ["where"] or noun in _PLACE_NOUNS:
        return "place"
    if re.match(r"what (?:does|did|do) .+ (?:mean|stand for)\b|what is the meaning of\b", q):
        return "meaning"  # "What does ribollita mean?": what the evidence says it means
    if re.search(r"\bnationality\b", q):
        return "nationality"
    if re.search(r"\bfor a living\b|\b(?:job|occupation|profession)\b|^what (?:does|did|do) (?:\S+ ){1,4}do\b", q):
        return "role"  # "What does Thomas Vireo do for a living?": "painter"
    if q.startswith(("who", "whom", "whose")) or noun in _PERSON_NOUNS:
        return "person"
    return "name"


def asked_object(question: str) -> str:
    """The verb a question asks the object of ("... secured what for Ethiopia?" -> secured), lower case; "" when
    the question's "what" names a noun ("what county") or follows no verb."""
    match = re.search(r"\b([a-z]{4,})\s+what\b(?:\s+([\w'’-]+))?", question)
    if match is None:
        # "What did the jury award?", "What does Acme sell?": the verb closes the question
        closing = re.match(r"\s*what\s+(?:did|does|do|has|have|had|will|would|can|could)\s+\S.*?\s([a-z]{3,})\s*\?*\s*$",
                           question, re.IGNORECASE)  # fmt: skip
        verb = closing.group(1) if closing else ""
        # "What language is Quillmark written in?": the noun types the answer, written after the closing verb
        passive = re.match(r"\s*(?:what|which)\s+[a-z]+\s+(?:is|was|are|were)\s+\S.*?\s([a-z]{3,}ed|written|built|"
                           r"made|held|sung|spoken|told|taught|drawn|shown|won)\s+(?:in|on|at|with|from|into|for)\s*\?*\s*$",
                           question, re.IGNORECASE)  # fmt: skip
        verb = verb or (passive.group(1) if passive else "")
        if not verb.islower():
            return ""  # "What does the waiter gain from the Budget?": a name closes it, not a verb
        return "" if verb in _NOT_NOUN or verb in _STOP or verb in ("do", "mean") else verb
    if match.group(1) in _NOT_NOUN or match.group(1) in _STOP:
        return ""
    after = (match.group(2) or "").casefold()
    if after and after not in _NOT_NOUN:
        return ""  # "won what award": the noun types the answer
    return match.group(1)


def asked_verb(question: str) -> tuple[str, list[str]] | None:
    """A "who/which ... <verb> <name>" question's verb and the names it is done to ("Who manufactured Meridian
    Rail's trains?" -> ("manufactured", ["Meridian Rail"])); None for "who is/was/did ..." or no verb."""
    match = re.match(r"\s*who\s+([a-z]+)\s+(.*)$", question, re.IGNORECASE)
    noun = asked_noun(question) if match is None else ""
    if noun:  # "Which group owns ...": the verb after the asked noun
        match = re.match(
            rf"\s*(?:what|which)\s+(?:[\w'’-]+\s+){{0,3}}?{re.escape(noun)}(?:\s+(?:and|or)\s+[\w-]+)?\s+([a-z]+)\s+(.*)$",
            question,
            re.IGNORECASE,
        )
    if match is None:
        return None
    verb = match.group(1).casefold()
    if len(verb) < 3 or verb in _NOT_NOUN or verb in _STOP or verb in _ARTICLES or verb.endswith("ing"):
        return None
    objects = [name for name in names_in(match.group(2)) if not name[:1].isdigit()]
    # "Which company runs the servers?": the doer of a verb done to a common noun is asked too
    # ("objected to the plans", "applied for permission": with its preposition)
    after = match.group(2).casefold().split()[:1]
    done_to = bool(noun) and bool(after) and (after[0] in _ARTICLES or after[0] in _PREPOSITIONS)
    return (verb, objects) if objects or done_to else None


# "What are the dimensions of the tapestry?": a measure asked by its noun is answered with its unit, as "how long" is
_MEASURE_NOUNS = frozenset(
    "height length weight width depth distance dimension size volume temperature pressure duration".split()
)


def asks_measure(question: str) -> bool:
    """The question asks for a measure with its unit: "how much/long/far/...", or a measure noun ("the dimensions")."""
    q = question.casefold()
    if re.search(r"\bhow (?:much|long|far|tall|wide|big|heavy|old|large|deep|high|fast)\b", q):
        return True
    return measure_asked(question)


def measure_asked(question: str) -> bool:
    """The question names the measure it asks for ("What is the height of ...?"): its answer needs a unit."""
    return _singular(asked_noun(question)) in _MEASURE_NOUNS


def what_verb(question: str) -> str:
    """The verb a "what <verb>s ...?" question asks the doer of ("What protects qubits from decoherence?" ->
    protects, "What stopped the fleet?" -> stopped), lower case; "" for any other question."""
    match = re.match(r"\s*what\s+([a-z]{3,}(?:s|ed))\b", question.casefold())
    return match.group(1) if match and match.group(1) not in _NOT_NOUN else ""
