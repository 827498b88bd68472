"""The extractive reader's sense of what a passage is about (exograph/core/llm/extractive.py): whom a sentence
opening with a pronoun ("She had joined ...", "In 1931 he married ...") or a generic noun ("the company was bought
by X") means, the passage's lead name its document's title gives, and the sentence read with its referent in the
pronoun's place. Pure."""

from __future__ import annotations

import re
from collections.abc import Sequence

from exograph.core.llm.extractive_text import _DATE, _NAME_WORD, names_in, whole_sentences

_PRONOUN = re.compile(r"^(he|she|it|they|his|her|its|their)\b", re.IGNORECASE)  # a sentence about its passage's subject
_PERSONAL = re.compile(r"^(he|she|his|her)\b", re.IGNORECASE)
# A sentence about its passage's subject whose pronoun follows an opening phrase: "After the war she became ...",
# "In 1931 he married ..." (read as opening with the pronoun).
_FRONTED = re.compile(
    r"^((?:in|on|by|after|since|during|from|at|later|then|before|when|while|following|until|throughout|with)\b"
    r"(?:[^,.;]|(?<=\d)[,.](?=\d)){0,50}?,?\s+)(he|she|they|it)\b",
    re.IGNORECASE,
)


def _personal(sentence: str) -> bool:
    """The sentence's opening pronoun (or the one after its opening phrase) is a person's: he, she, his, her."""
    fronted = _FRONTED.match(sentence)
    return _PERSONAL.match(sentence) is not None or (
        fronted is not None and fronted.group(2).casefold() in ("he", "she")
    )


# An opening phrase before a sentence's subject ("In 2024 ", "After the merger, "), optional.
_OPENING_PHRASE = r"(?:(?:in|on|by|after|since|during|from|at|later|then)\b[^,.;]{0,30}?,?\s+)?"
# A sentence about its passage's subject by a generic noun instead of a pronoun: "In 2024 the company was bought by
# X", "The firm's founder ...": read as "it"/"its" (its referent is the name an earlier sentence is about), unless a
# name follows the noun ("the company Orrin Therapeutics" names its own).
_DESCRIBED = re.compile(
    rf"^({_OPENING_PHRASE})(the\s+(?:company|firm|business|"
    r"group|corporation|charity|trust|foundation|society|club|team|band|museum|school|college|university|hospital|"
    r"clinic|institute|agency|council|studio|publisher|brewery|bakery|shop|restaurant|hotel|startup|manufacturer|"
    r"maker|retailer|airline|railway|partnership|library|software|app|platform|organi[sz]ation)(?:['’]s)?)\b(?!\s+(?-i:[A-Z])|\s+(?:of|for|de)\s+(?-i:[A-Z]))",
    re.IGNORECASE,
)


# A sentence about a thing its document defines by a common noun: "Valdmora is a port city ..." then "The city is
# governed by ..."; "The Kestrel X2 is an 18-volt cordless drill-driver ..." then "The drill weighs 1.4 kg" (defined_nouns).
_THE_NOUN = re.compile(
    rf"^({_OPENING_PHRASE})(the\s+((?-i:[a-z][a-z-]*))(?:['’]s)?)\b"
    r"(?!\s+(?-i:[A-Z]))",
    re.IGNORECASE,
)
# Where a definition's noun phrase ends: a preposition, a relative word or a participle after the noun.
_DEFINITION_END = frozenset(
    "in on of at by for from with within near between that which who whose where when since and or but "
    "known made built founded based located set run owned".split()
)
# Nouns that name one settlement whichever the text uses ("a port city" is "the town" of its history).
_SETTLEMENT = frozenset("city town village port settlement municipality borough capital".split())
# Other nouns that name one thing whichever the text uses ("a 1945 film noir" is "the movie" of the next sentence),
# each also taken from a definition's phrase when another word heads it ("film" of "film noir").
_SAME_THING = tuple(
    frozenset(words.split())
    for words in (
        "film movie",
        "company firm business",
        "song single",
        "novel book",
        "album record",
        "series show programme program",
    )
)


def defined_nouns(sentences: Sequence[str]) -> dict[str, str]:
    """The common nouns a document defines its names by, lower case noun -> name: "Valdmora is a port city on the
    coast" gives city (and the other words for a settlement) -> Valdmora; "The Kestrel X2 is an 18-volt cordless
    drill-driver made by ..." gives drill-driver, drill and driver -> Kestrel X2. The first definition of a noun wins."""
    defined: dict[str, str] = {}
    for sentence in sentences:
        first = next(iter(names_in(sentence)), "")
        opening = first and re.match(
            rf"(?:the\s+)?{re.escape(first)}(?:\s*\([^)]*\))?,?\s+(?:is|was|are|were)\s+(?:a|an|the)\s+([^,;:()]+)",
            sentence,
        )
        if not opening:
            continue
        head = ""
        phrase: list[str] = []
        for word in opening.group(1).split():
            bare = word.strip(".").casefold()
            if bare in _DEFINITION_END or (head and bare.endswith("ed")):
                break
            if re.fullmatch(r"[a-z][a-z-]*", word.strip(".")):
                head = bare
                phrase.append(bare)
        same = {w for group in _SAME_THING for w in group if group & {head, *phrase}}
        for noun in {head, *head.split("-"), *(_SETTLEMENT if head in _SETTLEMENT else ()), *same} - {""}:
            defined.setdefault(noun, first)
    return defined


def pronoun_referents(sentences: Sequence[str], lead: str, defined: dict[str, str] | None = None) -> list[str]:
    """Whom each sentence of a passage that opens with a pronoun is about ("" for the others): the nearest earlier
    sentence that names someone or something: "he"/"she" the first name of two words or more with no article
    before it there (a person's: "The Wexley Harriers ... under the coach Marta Silvan. She had joined ..."), "it"/"they" the first name there (its subject: "The
    Marlowe Lighthouse stands ... It was designed by ..."); an earlier sentence opening with a pronoun of the same
    kind passes its own referent on ("X is a singer. He became notable ... He made his debut ..."); the passage's
    lead name when no earlier sentence names one. A sentence opening with a noun its document defines a name by
    (`defined`, defined_nouns: "The city is governed by ...") is about that name."""
    referents: list[str] = []
    for index, sentence in enumerate(sentences):
        opening = (
            _PRONOUN.match(sentence) or _FRONTED.match(sentence) or (_DESCRIBED.match(sentence) if index else None)
        )
        # "The bakery buys ..." after "Harrow Lane Bakery is a family bakery": the name the document defines the
        # noun by, not the nearest earlier name ("... comes from Tolbridge Mill")
        noun = _THE_NOUN.match(sentence) if defined and not _opens_with_pronoun(sentence) else None
        if noun is not None and defined is not None and noun.group(3).casefold() in defined:
            named = defined[noun.group(3).casefold()]
            referents.append("" if named.casefold() in sentence.casefold() else named)
            continue
        if opening is None:
            referents.append("")
            continue
        if not _opens_with_pronoun(sentence):  # "the company": the name an earlier sentence opens with, as subject
            referents.append(next((n for back in sentences[index - 1 :: -1] if (n := _subject_name(back))), ""))
            continue
        personal = _personal(sentence)
        found = lead
        # a person's passage ("Agathe Morel was a French chemist ..."): "she" means her, not a name an earlier
        # sentence gives as no subject ("... confirmed by the German biochemist Karl Wendt. She was elected ...")
        biography = (
            personal
            and len(lead.split()) >= 2
            and not re.search(rf"\b(?:the|a|an)\s+{re.escape(lead)}", sentences[0], re.I)
        )
        for back in range(index - 1, -1, -1):
            earlier = sentences[back]
            if _personal(earlier) == personal and (referents[back] or _opens_with_pronoun(earlier)):
                found = referents[back] or lead  # (its own pronoun means the same one, never a name after it)
                break
            names = [n for n in names_in(earlier) if not _DATE.fullmatch(n) and not n[:1].isdigit()]
            if personal:  # a person's name has two words or more and no article before it ("the Wexley Harriers")
                names = [
                    n
                    for n in names
                    if len(n.split()) >= 2 and not re.search(rf"\b(?:the|a|an)\s+{re.escape(n)}", earlier, re.I)
                ]
            if names and biography and not _subject_name(earlier):
                continue
            if names:
                found = names[0]
                break
        referents.append(found)
    return referents


def _subject_name(sentence: str) -> str:
    """The name a sentence opens with as its subject ("Orrin Therapeutics, which ..., is based", "Tamsin Ales was
    set up"), or "" ("The council's clerk, Harriet Vane, ...": the name is not its subject)."""
    first = next(iter(names_in(sentence)), "")
    opens = first and re.match(
        rf"(?:[Tt]he\s+)?{re.escape(first)}(?:,|\s+(?:is|was|are|were|has|had|[a-z]+ed|[a-z]+s)\b)", sentence
    )
    return first if opens else ""


def _opens_with_pronoun(sentence: str) -> bool:
    return _PRONOUN.match(sentence) is not None or _FRONTED.match(sentence) is not None


def title_text(title: str) -> str:
    """A document's title as words ("elin-marsh.txt" -> "elin marsh txt"), to be read for the names it gives."""
    return re.sub(r"[_.-]+", " ", title)


def passage_lead(sentences: Sequence[str], title: str, document: str) -> str:
    """Whom a passage is about when its sentences say it by a pronoun: its first sentence's subject, else its
    document's first sentence's subject, else its first sentence's first name; or, when
    that sentence opens with a pronoun itself ("In 1931 she married the violinist Owen Pryce": not Owen Pryce), the
    name its document's title gives ("elin-marsh.txt": Elin Marsh, as the document's text writes it), else none."""
    if not sentences:
        return ""
    if not _opens_with_pronoun(sentences[0]):
        # a later passage opening on another's name ("The result was confirmed by Karl Wendt"): its document's
        # subject, as its first sentence opens with it ("Agathe Morel was a French chemist ...")
        opening = whole_sentences(document)[:1] if document and not _subject_name(sentences[0]) else []
        return (_subject_name(opening[0]) if opening else "") or next(iter(names_in(sentences[0])), "")
    words = set(_NAME_WORD.findall(title_text(title).casefold()))
    named = [n for n in names_in(document) if len(n.split()) >= 2 and set(_NAME_WORD.findall(n.casefold())) <= words]
    return max(named, key=len) if named else ""


def described_subject(sentence: str) -> bool:
    """The sentence's subject is its passage's, called by a generic noun ("In 2024 the company was bought by X")."""
    return _DESCRIBED.match(sentence) is not None


def resolved(sentence: str, referent: str) -> str:
    """The sentence with its opening pronoun replaced by its referent ("It was designed by X" -> "The Marlowe
    Lighthouse was designed by X"; "Its ..." -> "The Marlowe Lighthouse's ..."), for reading it out of context."""
    if not referent:
        return sentence
    match = _PRONOUN.match(sentence)
    fronted = _FRONTED.match(sentence) if match is None else None
    if fronted is not None:
        return fronted.group(1) + referent + sentence[fronted.end() :]
    if match is None:
        described = _DESCRIBED.match(sentence)
        noun = _THE_NOUN.match(sentence) if described is None else None
        if noun is not None:  # "The city is governed by ..." -> "the city Valdmora is governed by ...": both words said
            owner = noun.group(2).casefold().endswith(("'s", "’s"))
            return f"{noun.group(1)}the {noun.group(3)} {referent}{'’s' if owner else ''}{sentence[noun.end() :]}"
        if described is None:
            return sentence
        owner = described.group(2).casefold().endswith(("'s", "’s"))
        return described.group(1) + (f"{referent}'s" if owner else referent) + sentence[described.end() :]
    word = match.group(1).casefold()
    said = f"{referent}'s" if word in ("his", "her", "its", "their") else referent
    return said + sentence[match.end() :]
