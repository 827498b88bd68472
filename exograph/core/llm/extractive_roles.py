"""The extractive reader's sense of who did what (exograph/core/llm/extractive_spans.py): the doer of a
question's verb in the evidence, a sentence where the question's object does the verb itself, a person named by
an occupation, the occupations a sentence gives someone, what a sentence says the asked noun is, what it writes
after the question's verb, a name that is the thing asked about, and a place named by a common noun. Pure."""

from __future__ import annotations

import re
from collections.abc import Sequence

from exograph.core.llm.extractive_text import (
    _IRREGULAR,
    _NAME_WORD,
    _OWN,
    _SELL,
    _STOP,
    FAMILY_STEMS,
    _all_stems,
    _phrasal,
    _Sentence,
    _stem,
    family_stems,
    family_words,
)

_ARTICLES = frozenset("the a an this that these those his her its their my our your".split())
# a subject opening with a pronoun names nothing itself ("It was designed ...", "They are a charity ...")
_PRONOUN_START = frozenset("it he she they this that these those there its his her their one we you i".split())


def _kin(word: str, verb: str) -> bool:
    """word is verb in another form ("built" / "builds") or of its relation family ("assembled" / "manufactured",
    "managing" / "runs")."""
    said, asked = _stem(word), _stem(verb)
    return said == asked or any(said in family and asked in family for family in FAMILY_STEMS)


# "Which cave will they visit?": the verb closing a which/what-noun question, whose object the noun asks for
_CLOSING_VERB = re.compile(
    r"\s*(?:which|what)\s+[a-z-]+\s+(?:will|did|does|do|would|can|could|should|must|is|are|was|were|has|have|had)\s+"
    r"\S.*?\s([a-z]{3,})(?:\s+(?:for|to|from|in|on|at|with|by|into|about))?\s*\?*\s*$",
    re.IGNORECASE,
)


def closing_verb(question: str) -> str:
    """The verb a "which/what <noun> ... <verb>?" question asks the object of ("Which cave will they visit?" ->
    visit), lower case; "" when the question does not close on a verb."""
    match = _CLOSING_VERB.match(question)
    return _content_verb(match.group(1) if match else "")


def _content_verb(word: str) -> str:
    """word when it may be a question's closing verb (lower case, not a stop word nor an auxiliary), else ""."""
    return word if word.islower() and word not in _STOP and word not in _AUXILIARY else ""


# "When did the museum reopen?", "How much do her bowls sell for?": the verb closing a when/where/how question
_ACTION_CLOSING = re.compile(
    r"\s*(?:when|where|how\s+(?:much|many\s+[a-z-]+|long|far|old|often|soon|high|big)|what\s+year|in\s+what\s+year)\s+"
    r"(?:will|did|does|do|would|can|could|should|must|is|are|was|were|has|have|had)\s+\S.*?\s([a-z]{3,})"
    r"(?:\s+(?:for|to|from|in|on|at|with|by|into|about|up|out|off|down|over|back))?\s*\?*\s*$",
    re.IGNORECASE,
)


# verbs that say only that something happens or lasts ("when did the fire happen", "where will it take place")
_LIGHT = frozenset("happen occur place take held hold begin start end last go come get make made".split())


# "What is the tapestry insured for?": a what-question closing on a passive verb asks what that action says
_WHAT_PASSIVE = re.compile(
    r"\s*what\s+(?:is|was|are|were)\s+\S.*?\s([a-z]{3,}(?:ed|en))(?:\s+(?:for|to|from|in|on|at|with|by|after|as|of))?"
    r"\s*\?*\s*$",
    re.IGNORECASE,
)


def action_verb(question: str) -> str:
    """The verb a when/where/how question closes on, the action it asks the time, place or figure of ("When did the
    museum reopen?" -> reopen), or the passive verb a what-question closes on ("What is it insured for?" ->
    insured), lower case; "" when it closes on no such word."""
    match = _ACTION_CLOSING.match(question) or _WHAT_PASSIVE.match(question)
    verb = _content_verb(match.group(1) if match else "")
    return "" if verb in _LIGHT else verb


def _object_of(sentence: str, span: str, verb: str) -> bool:
    """The sentence writes span as the object of verb or of its kin ("visit the Blue John Cavern" for visit)."""
    return any(
        _kin(m.group(1), verb)
        for m in re.finditer(rf"\b([a-z]+)\s+(?:(?:the|a|an|its|their|his|her)\s+)?{re.escape(span)}\b", sentence)
    )


# "Who is Fernhill's boss?": whose role the question asks for
_ROLE_OF = re.compile(
    r"\s*who\s+(?:is|was|are|were)\s+((?:[A-Z][\w.&-]*\s+){0,3}[A-Z][\w.&-]*)['’]s\s+[a-z]", re.IGNORECASE
)


def role_owner(sentence: str, span: str, about: str) -> str | None:
    """Whose role the sentence gives span ("Fernhill's chief executive, Dominic Hale": Fernhill; "Its chief
    executive, Siân Morgan": whom its pronoun means, `about`), or None when it gives none."""
    name = re.escape(span)
    owned = re.search(
        rf"\b([A-Z][\w.&-]*(?:\s+[A-Z][\w.&-]*){{0,3}})['’]s\s+(?:[a-z-]+\s+){{0,3}}[a-z-]+,?\s+{name}\b", sentence
    )
    if owned is not None:
        return owned.group(1)
    pronoun = re.search(rf"\b(?:[Ii]ts|[Hh]is|[Hh]er|[Tt]heir)\s+(?:[a-z-]+\s+){{0,3}}[a-z-]+,?\s+{name}\b", sentence)
    return about if pronoun is not None and about else None


_LISTED_NAME = r"[A-Z][\w.'’-]*(?:\s+[A-Z][\w.'’-]*)*"


def _agent(sentence: str, span: str, verb: str) -> bool:
    """The sentence names span as the doer of the question's verb: in the passive ("were built by Tarvik Works",
    "designed by the engineer X") or by the role the verb's family names ("its managing director is X")."""
    name = re.escape(span)
    # the verb may stand up to three words before "by" ("the design work was carried out by Arup"), and the doer
    # may follow its description ("run by a local social enterprise, Green Spoon")
    passive = re.finditer(
        rf"\b((?:[\w-]+\s+){{1,3}})by\s+(?:(?:the|a|an)\s+)?(?:[A-Z][\w-]*\s+(?=(?!and\b|or\b)[a-z]))?(?:[a-z][\w-]*\s+){{0,2}}"
        rf"(?:[a-z][\w-]*,\s+)?{name}\b",
        sentence,
    )
    if any(_kin(word, verb) for m in passive for word in m.group(1).split()) and not re.search(
        rf"\b{name}\s+[a-z][\w-]*\s+[A-Z]", sentence
    ):
        return True  # (not "by the Antwerp firm Vulcan Ovens": Antwerp says where the firm is)
    # "written by David Diamond and David Weissman": each name of the list after "by" is a doer
    listed = re.finditer(
        rf"\b([\w-]+)\s+by\s+(?:(?:{_LISTED_NAME}(?:,\s+|,?\s+and\s+))+{name}\b|{name},?\s+and\s+[A-Z])", sentence
    )
    if any(_kin(m.group(1), verb) for m in listed):
        return True
    # "Lina drew the shop's logo": the name before the verb does it (not "a studio in Ludlow run by X")
    if any(
        _kin(m.group(1), verb)
        for m in re.finditer(
            rf"\b{name}\s+(?:(?:also|then|later|first|herself|himself)\s+)?([a-z]+)\b(?!\s+by\b)", sentence
        )
    ):
        return True
    # "The movie stars X, Y and Z", "a 1945 film starring X": a film stars its cast, who star in it
    if _kin("starred", verb) and re.search(
        rf"\b(?:stars|starring|co-stars|co-starring)\s+(?:[A-Z][\w.'’-]*(?:\s+[A-Z][\w.'’-]*)*(?:,\s+|\s+and\s+))*"
        rf"{name}\b",
        sentence,
    ):
        return True
    # "an army of 9,000 men under Field Marshal X", "the orchestra under its conductor X": led by X
    if _kin("led", verb) and re.search(
        rf"\bunder\s+(?:(?:the|its|their|a)\s+)?(?:[\w-]+\s+){{0,2}}?{name}\b", sentence
    ):
        return True
    # "its managing director is X", "a single supplier for motors, X": the doer's noun up to four words before
    role = re.finditer(rf"\b([\w-]+)((?:\s+[a-z][\w-]*){{0,3}})(?:\s+(?:is|was)|,)\s+{name}\b", sentence)
    return any(_kin(m.group(1), verb) or any(_kin(w, verb) for w in m.group(2).split()) for m in role)


def _undergoes(sentence: str, span: str, verb: str) -> bool:
    """The sentence has span undergo the question's verb, in the passive: "Northmark Yards, founded in 1871, ...",
    "the bridge was built by X": what was founded or built, not who did it."""
    if not verb:
        return False
    after = re.search(
        rf"\b{re.escape(span)}(?:,\s*|\s+(?:was|were|is|are|has\s+been|had\s+been)\s+)"
        r"(?:(?:first|originally|later|then|also|jointly)\s+)?([a-z]+)\b(\s+by\b)?",  # ("is run by": any form)
        sentence,
    )
    participle = after.group(1) if after is not None else ""
    return (participle.endswith("ed") or participle in _IRREGULAR or bool(after and after.group(2))) and _kin(
        participle, verb
    )


# The other side of a sale: "bought it from Trinity House" names the seller, "sold it to the trust" the buyer.
_OTHER_SIDE = {_SELL: (_OWN, "from"), _OWN: (_SELL, "to")}


def _converse_doer(sentence: str, span: str, verb: str) -> bool:
    """The sentence names span as the doer of the question's verb by the converse verb: for "who sold it", the one
    something was bought or acquired from; for "who bought it", the one it was sold or handed to."""
    asked = _stem(verb)
    for family, (other, preposition) in _OTHER_SIDE.items():
        if asked not in FAMILY_STEMS[family]:
            continue
        for m in re.finditer(
            rf"\b([\w-]+)\s+(?:[\w'’-]+\s+){{0,4}}?{preposition}\s+(?:(?:the|a|an)\s+)?{re.escape(span)}\b", sentence
        ):
            if _stem(m.group(1)) in FAMILY_STEMS[other]:
                return True
    return False


def _converse_subject(sentence: str, span: str, verb: str) -> bool:
    """span does the converse of the question's verb: "The trust owns it" or "The trust bought it" for "who sold it"
    (the buyer, not the seller); "Trinity House sold it" for "who bought it"."""
    asked = _stem(verb)
    for family, (other, _) in _OTHER_SIDE.items():
        if asked in FAMILY_STEMS[family]:
            for m in re.finditer(rf"\b{re.escape(span)}\s+(?:[a-z]+\s+){{0,2}}?([a-z]+)\b", sentence):
                if _stem(m.group(1)) in FAMILY_STEMS[other]:
                    return True
    return False


_AUXILIARY = frozenset("did does do has have had will would was were is are".split())
# "Who was the screenwriter of X?": the role a who-question asks for
_WHO_ROLE = re.compile(
    r"\s*who\s+(?:is|was|are|were)\s+(?:the|a|an|its|their|his|her)\s+([a-z][a-z-]*)\s+(?:of|for|on|behind)\b"
)


def act_asked(question: str, noun: str) -> str:
    """The role noun naming an act that a person question asks for: its asked noun ("Which screenwriter worked on
    it?") or the role of "Who was the screenwriter of X?", when a relation family holds it (written, directed,
    founded ...); "" otherwise."""
    match = _WHO_ROLE.match(question.casefold())
    role = noun or (match.group(1).split("-")[-1] if match else "")
    return role if role and family_words(role) else ""


def doer_verb(question: str) -> str:
    """The verb whose doer a who-question asks for: "Who sold the lighthouse?" -> "sold"; "Who did the trust buy it
    from?" asks for the one who sold it ("sold"), "Who did they sell it to?" for the one who bought it ("bought")."""
    m = re.match(r"\s*(?:who|whom)\s+([a-z]+(?:-[a-z]+)?)\b", question, re.IGNORECASE)  # "who co-wrote it"
    if m is None:
        return ""
    verb = m.group(1).casefold()
    said = re.match(r"\s*(?:who|whom)\s+([a-z]+(?:-[a-z]+)?)\b", _phrasal(question))
    if said is not None and said.group(1) != verb:
        return said.group(1)  # "who set the café up": founded; "who put it up": built
    if verb not in _AUXILIARY:
        return verb
    # "Who is funding the show?": the progressive's verb after the auxiliary
    going = re.match(r"\s*(?:who|whom)\s+(?:is|are|was|were)\s+([a-z]+ing)\b", question, re.IGNORECASE)
    if going is not None and going.group(1).casefold() not in _STOP:
        return going.group(1).casefold()
    end = re.search(r"\b(from|to)\W*$", question.casefold())
    if end is None:
        return ""
    stems = {_stem(w) for w in re.findall(r"[a-z]+", question.casefold())}
    if end.group(1) == "from" and stems & FAMILY_STEMS[_OWN]:
        return "sold"
    if end.group(1) == "to" and stems & FAMILY_STEMS[_SELL]:
        return "bought"
    return ""


def _does_itself(sentence: str, doing: tuple[str, list[str]]) -> bool:
    """The sentence has the question's object doing the question's verb ("Meridian Rail runs ..." for "who runs
    Meridian Rail"): its names are what the object acts on, not who acts on it."""
    verb, objects = doing
    for name in objects:
        for m in re.finditer(rf"\b{re.escape(name)}(?:['’]s)?\s+([\w-]+)", sentence):
            if _stem(m.group(1)) == _stem(verb):
                return True
    return False


# A person's occupation written before their name ("the engineer X", "the cardiologist X", "a shipowner X").
_OCCUPATION = r"[a-z]+(?:er|or|ist|ian|ant|man|woman|ess|wright|smith|mason|maker|owner)"


def _titled(sentence: str, span: str) -> bool:
    """The sentence writes a person's occupation just before span ("designed by the engineer Agnes Vireo")."""
    return len(span.split()) >= 2 and bool(
        re.search(rf"\b(?:the|a|an)\s+(?:[a-z]+\s+)?{_OCCUPATION}\s+{re.escape(span)}\b", sentence)
    )


_ROLE = re.compile(
    r"\b(?:became|becomes|become|is|was|worked as|works as|work as|served as|serves as|trained as|employed as|"
    r"practised as|practiced as)\s+(?:an?|the)\s+((?:[a-z][\w-]*\s+){0,2}?[a-z][\w-]*)(?=\s*(?:[,.;]|$|\s(?:"
    r"and|in|at|on|for|with|who|from|of|to|before|after|until|when|while|by)\b))"
)


def role_phrases(sentence: str) -> list[str]:
    """The occupations a sentence gives someone ("Her brother, X, became a painter and lived in Florence" ->
    painter; "he worked as a deckhand on fishing trawlers" -> deckhand): a lower-case noun phrase of at most
    three words after "became a", "worked as a", "is a", ..."""
    return [m.group(1) for m in _ROLE.finditer(sentence)]


def _predicates(sentence: str, noun: str) -> list[str]:
    """What a sentence says the asked noun is ("Their colours are green and white" -> "green and white" for "what
    colours"), at most five words, and the values it labels with the noun (_labelled); [] when it says neither."""
    if not noun or len(noun) < 3:
        return []
    word = r"[\w'’&-]+(?:\.\d+)*"  # "Python 3.10": a version's point is no sentence end
    match = re.search(rf"\b{re.escape(noun)}\w*\s+(?:is|are|was|were)\s+(?:now\s+|currently\s+)?((?:{word}\s+){{0,4}}?{word})\s*(?:[.;!?]|,\s|$)",
                      sentence, re.IGNORECASE)  # fmt: skip
    if match is None or match.group(1).split()[0].casefold() in _ARTICLES | {"not", "also", "still"}:
        return _labelled(sentence, noun)
    return [match.group(1), *_labelled(sentence, noun)]


_ORDINAL = (
    r"(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|ground|top|lower|upper|"
    r"\d+(?:st|nd|rd|th))"
)


def _labelled(sentence: str, noun: str) -> list[str]:
    """The values a sentence labels with the asked noun: a code written after it ("password riverside27", "Wi-Fi
    network: NDES-Guest", "gate B12"; a word with a digit or a capital after its first letter), and the noun with
    its ordinal ("on the second floor" -> "second floor" for "which floor")."""
    noun = re.escape(noun)
    coded = re.findall(
        rf"\b(?i:{noun})s?\s*:?\s+([A-Za-z]*\d[\w-]*|[A-Za-z][a-z]*[A-Z][\w-]*|[A-Z]{{2,}}[\w-]*)", sentence
    )
    ordinal = re.findall(rf"\b({_ORDINAL}\s+{noun})\b", sentence, re.IGNORECASE)
    return [*coded, *ordinal]


_PHRASE_END = frozenset(
    "of in on at for from by with to and or but as than that which who whom whose where when while after before "
    "during under over into since until is was are were be been has have had".split()
)


def _objects(sentence: str, verb: str, asked: frozenset[str] | set[str]) -> list[str]:
    """What sentence writes after the question's verb (its stem), up to four words to a preposition or a stop,
    the article and the words the question already names left out ("secured Ethiopian sovereignty." ->
    "sovereignty" for "secured what for Ethiopia")."""
    stem = _stem(verb)
    tokens = re.findall(r"[\w'’-]+(?:\+\+|#(?!\w))?|[^\w\s]", sentence)  # "C++", "F#" are one word
    out: list[str] = []
    for index, token in enumerate(tokens):
        # the verb in another form or of its family ("agreed to buy X" for "what will they purchase"), not its nouns
        if not _kin(token, verb) or (_stem(token) != stem and re.search(r"(?:er|or|ers|ors|ion|ship)$", token)):
            continue
        phrase: list[str] = []
        for word in tokens[index + 1 : index + 8]:
            low = word.casefold()
            if not re.match(r"[\w'’-]+(?:\+\+|#)?$", word) or (phrase and low in _PHRASE_END) or len(phrase) >= 4:
                break
            if not phrase and (low in _ARTICLES or low in _PHRASE_END or _stem(low) in asked):
                continue
            phrase.append(word)
        while phrase and (phrase[-1].casefold() in _ARTICLES or phrase[-1].casefold() in _STOP):
            phrase.pop()
        if phrase:
            out.append(" ".join(phrase))
    return out


# The common nouns of places a sentence may name without a proper name ("in the community hall").
_SITE_NOUNS = frozenset(
    "city country state town county place region island river village district province capital location "
    "continent area neighborhood neighbourhood suburb borough municipality nation hall church chapel cathedral school college university campus library museum gallery theatre theater "
    "studio park garden square street road lane house home farm barn yard hospital clinic station airport "
    "harbour harbor port quay pier office building centre center hotel inn pub club court castle palace "
    "market factory mill mine quarry warehouse depot stadium arena field ground valley lake coast bay forest "
    "hill mountain room basement cellar attic kitchen laboratory lab terminal wharf dock jetty marina hangar plaza "
    "mall arcade pavilion auditorium hostel campsite hut shed cabin cottage marquee tent workshop gym gymnasium "
    "pool canteen cafe café restaurant bar shop store lounge ballroom courtyard churchyard cemetery garage".split()
)


def _site(word: str) -> bool:
    """A noun of a place, or a compound ending in one ("boathouse", "churchyard")."""
    return word in _SITE_NOUNS or any(word.endswith(noun) for noun in _SITE_NOUNS if len(noun) >= 4)


def _common_places(sentence: str) -> list[str]:
    """The places a sentence names by a common noun after in/at ("in the community hall" -> "the community
    hall"): up to three words ending in a noun of a place (_SITE_NOUNS), a name among them ("in the Dunmore scout
    hut")."""
    out = []
    for words in re.findall(r"\b(?:in|at)\s+the\s+([\w'’-]+(?:\s+[\w'’-]+){0,2})", sentence):
        kept = words.split()
        while kept and not _site(kept[-1]):
            kept.pop()
        place = "the " + " ".join(kept)  # "the back room of the Cock Hotel" (not "the town of X": X is the place)
        whose = re.search(rf"\b{re.escape(place)}( of the [A-Z][\w'’-]*(?: [A-Z][\w'’-]*)*)", sentence)
        if kept:
            out.append(place + (whose.group(1) if whose else ""))
    return out


def _before_asked_noun(sentence: str, span: str, question: str) -> bool:
    """Whether span is written right before a lower-case noun the question writes after an article or a
    possessive: "the Kelburn memorial" for "who carved the memorial?" names the thing asked about, not its answer."""
    match = re.search(rf"\b{re.escape(span)}\s+([a-z][\w'’-]*)", sentence)
    if match is None or match.group(1) in _STOP:
        return False
    after = re.findall(r"\b(?:the|a|an|its|his|her|their|this|that)\s+([a-z][\w'’-]*)(?:\s+([a-z][\w'’-]*))?", question)
    nouns = {_stem(word) for pair in after for word in pair if word and word not in _PHRASE_END and word not in _STOP}
    return _stem(match.group(1)) in nouns


# When a thing began and when it ended are two links: "a larger trial would begin in 2025" does not say when the
# trial finished, and "ran between March 2021 and August 2023" says its start first and its end last.
_STARTED = re.compile(
    r"\b(?:begin|begins|began|begun|start|starts|started|open|opens|opened|launch|launches|launched|commence[sd]?|"
    r"first)\b",
    re.IGNORECASE,
)
_ENDED = re.compile(
    r"\b(?:end|ends|ended|finish|finishes|finished|complete|completes|completed|conclude[sd]?|close|closes|closed|"
    r"last|until|till)\b",
    re.IGNORECASE,
)
_RANGE_WORDS = r"(?:and|to|until|till|through)"


def date_end(question: str, sentence: str, span: str) -> int:
    """For "when did X start / finish?": 1 when the sentence dates that end with span (the verb before it says it,
    or span opens / closes a range "between A and B", "from A to B"), -1 when it dates the other end, 0 otherwise
    (and for a question asking neither)."""
    ends = _ENDED.search(question) is not None
    if ends == (_STARTED.search(question) is not None) or re.search(rf"\s{_RANGE_WORDS}\s|[-–]", span):
        return 0  # (a range, "from 9am to 1pm" for "when is it open", holds both ends)
    name = re.escape(span)
    if re.search(rf"\b(?:between|from)\s+(?:the\s+)?(?:\w+\s+){{0,2}}?{name}\s+{_RANGE_WORDS}\b", sentence):
        said_end = False  # the range's first date
    elif re.search(
        rf"\b(?:between|from)\s+[^,;.]{{1,40}}?\s+{_RANGE_WORDS}\s+(?:the\s+)?(?:\w+\s+){{0,2}}?{name}\b", sentence
    ):
        said_end = True  # the range's last
    else:
        at = sentence.find(span)
        before = " ".join(sentence[:at].split()[-5:]) if at >= 0 else ""
        if _ENDED.search(before) and not _STARTED.search(before):
            said_end = True
        elif _STARTED.search(before) and not _ENDED.search(before):
            said_end = False
        else:
            return 0
    return 1 if said_end == ends else -1


def _named_elsewhere(word: str, sentences: Sequence[_Sentence]) -> bool:
    """Whether the evidence writes word as a name where no sentence start capitalises it, and never in lower case:
    "Tomasz owns the migration" over "Attendees: Rosa Lindqvist, Tomasz Wierzbicki" (a first name the NER missed),
    not "Minutes of the council" over "the minutes were read"."""
    within = re.compile(rf"[\w,;:)]\s+{re.escape(word)}\b")
    lower = re.compile(rf"\b{re.escape(word.casefold())}\b")
    return any(within.search(s.text) for s in sentences) and not any(lower.search(s.text) for s in sentences)


def _says_verb(sentence: str, verb: str, family: set[int]) -> bool:
    """The sentence says the question's verb: in any form ("conducted" for "conduct"), or its relation family."""
    return _stem(verb) in _all_stems(sentence) or bool(family & family_stems(sentence))


def _doers(sentence: str, verb: str) -> list[str]:
    """What a sentence says does verb: the subject before it ("Quantum error correction protects qubits ...") or
    the agent after it in the passive ("was driven back by storms" for "what drove it back"), at most five words."""
    tokens = re.findall(r"[\w'’-]+|[^\w\s]", sentence) if verb else []
    out: list[str] = []
    for index, token in enumerate(tokens):
        if not _kin(token, verb):
            continue
        before: list[str] = []
        for word in reversed(tokens[max(0, index - 6) : index]):
            if not re.match(r"[\w'’-]+$", word) or word.casefold() in _PHRASE_END - {"of"}:
                break
            before.insert(0, word)
        while before and before[0].casefold() in _ARTICLES:
            before.pop(0)
        if before and len(before) <= 5 and before[0].casefold() not in _PRONOUN_START:
            out.append(" ".join(before))
        after = re.match(r"\s*(?:\w+\s+)?by\s+(?:the\s+|a\s+|an\s+)?((?:[\w'’-]+\s+){0,3}?[\w'’-]+)\s*(?:[,.;]|$|\s(?:and|but|which|who|in|on|at|from|for|with|to|after|during|until|since|over)\b)",
                         " ".join(tokens[index + 1 :]))  # fmt: skip
        if after:
            out.append(after.group(1))
    return out


def _subjects(sentence: str, noun: str) -> list[str]:
    """The subject a sentence defines as the asked noun, lower case or opening the sentence ("Drifting is a
    driving technique ..." -> Drifting for "what technique"); at most four words."""
    match = re.match(r"([\w'’-]+(?:\s+[\w'’-]+){0,3}?)\s+(?:is|was|are|were)\s+(?:an?|the)\s", sentence)
    if match is None or not noun:
        return []
    subject = match.group(1)
    if subject.casefold().split()[0] in _PRONOUN_START:
        return []
    return [subject] if _defines(sentence, subject, noun) else []


def _defines(sentence: str, span: str, noun: str) -> bool:
    """The sentence opens with span and says what it is, naming noun in lower case among the first ten words after
    its verb ("George Raft (born 1901) was an American film actor and dancer" defines George Raft as an actor)."""
    if not sentence.startswith(span.split()[0]):
        return False
    rest = sentence[len(span) :]
    said = re.search(r"\b(?:is|was|are|were|became|served as)\b(.*)", rest)
    if said is None:
        return False
    # a common noun among the description's first words (lower case: "Medal" of "the Medal of Honor" is a name's)
    words = [w for w in _NAME_WORD.findall(said.group(1))[:10] if w[:1].islower()]
    return _stem(noun) in {_stem(w) for w in words}
