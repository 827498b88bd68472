"""The offline extractor: typed named entities (a bundled NER model, ner.py), capitalised names, acronyms,
keyphrases and verb patterns; no network.

What becomes an entity, in order of precedence within a sentence (a later span overlapping an earlier one is
dropped):
  1. the NER model's names (ner.ner_spans): people, organisations, places, works, events, products, dates and
     quantities, typed by the model;
  2. a titled person ("Dr. Ada Lovelace"), a year or a month-and-year;
  3. capitalised multi-word names, CamelCase words and acronyms (typed by the NER type the document gives the
     same name elsewhere, else by cue words: "University" -> ORGANIZATION, "River" -> LOCATION; else CONCEPT);
  4. the document's keyphrases (YAKE, two words or more), CONCEPT, except fragments of a name: a keyphrase that
     shares a word with one of the document's NER names without being that name, or that name followed by
     lowercase words only ("film stars Audrey", "beating Becky Brewerton", "Hepburn as Eliza" are fragments;
     "Audrey Hepburn films" is a concept), and clause debris (a verb form in it, or a particle last:
     "trees back"), judged also by the model's part-of-speech tags where the phrase first occurs: a finite verb,
     a modal or a pronoun anywhere ("Katrina hit", "DMCA amends section"), or a first or last word that is not
     part of a noun phrase (a verb, adverb, preposition, conjunction...: "Obtaining basic pattern"; last, an
     adjective too: "Northwind Ferries annual") is a clause, a number in it a measure ("reef eleven miles
     south-west"); and so is the end of a longer NER name followed by
     lowercase words ("Ferries annual note" beside "Northwind Ferries").

A place written with the place it lies in ("Frederick, Maryland") is the place, with the pair as its alias.

A code of one capital and digits (spaCy's shapes Xd to Xdddd: "T3", "B897") is a name only when the document
writes it twice or more: once, it is a variable, a figure label or a table cell.
"""

from __future__ import annotations

import logging
import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from exograph.documents.extraction.names import name_tidy
from exograph.documents.extraction.ner import (
    NOT_NAME_START_TAGS,
    NerRead,
    NerSpan,
    ner_model,
    ner_read,
    pos_tags,
    token_offsets,
)
from exograph.documents.extraction.resolve import name_normalise
from exograph.documents.extraction.types import ChunkLike, Entity, Extraction, Mention, Relation
from exograph.documents.extraction.verbs import verb_lemma

logger = logging.getLogger(__name__)

_SENTENCE = re.compile(
    r"(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bMrs\.)(?<!\bProf\.)(?<!\bSt\.)(?<!\bvs\.)(?<!\bal\.)(?<!\bNo\.)"
    r"(?<=[.!?;])\s+(?=[^a-z])|\n{2,}"
)
_CAMEL = re.compile(r"\b(?:[A-Z][a-z]+[A-Z][A-Za-z0-9]*|[a-z]+[A-Z][A-Za-z0-9]+)\b")
_TITLE_PERSON = re.compile(r"\b(?:Dr|Mr|Mrs|Ms|Prof|Sir|Dame)\.?\s+((?:[A-Z][\w'’-]+)(?:\s+[A-Z][\w'’-]+){0,3})")
_CONNECTOR = r"(?:of|for|and|de|del|der|van|von|la|le|du|in|on|the|&)"
_CAPITALISED = re.compile(
    rf"\b[A-Z][\w'’&-]*[a-z0-9][\w'’&-]*(?:\s+(?:{_CONNECTOR}\s+)?(?:[A-Z][\w'’&-]+|[A-Z]{{2,}}))+"
)
_ACRONYM = re.compile(r"\b[A-Z][A-Z0-9&]{1,9}(?:s)?\b")
_ACRONYM_DEFINITION = re.compile(
    r"\b((?:[A-Z][\w-]+\s+(?:(?:of|for|and|the|on|in)\s+)?){1,8}[A-Z][\w-]+)\s+\(([A-Z][A-Z0-9&]{1,9})s?\)"
)
_YEAR = re.compile(
    r"\b(?:(?:January|February|March|April|May|June|July|August|September|October|November|December)"
    r"\s+(?:\d{1,2},\s+)?)?(?:1[5-9]\d\d|20\d\d)\b"
)
_NOISE_WORDS = (
    r"(?:The|A|An|In|On|At|For|From|This|That|These|Those|Our|We|It|If|When|While|As|But|And|Or|Of|To|By|With|"
    r"Figure|Fig|Table|Section|See|Abstract|Introduction|Conclusion|Conclusions|Evaluation|Acknowledgments|"
    r"Acknowledgements|Because|Parts|Here|There|Then|Thus|However|Also|Results|Discussion|Related|Work)"
)
_TRAILING_NOISE = re.compile(rf"\s+{_NOISE_WORDS}$")
_LEADING_NOISE = re.compile(rf"^{_NOISE_WORDS}\s+")
_ORG_CUES = re.compile(
    r"\b(?:Inc|Corp|Corporation|Ltd|LLC|GmbH|AG|plc|Company|Co|University|Universität|Institute|College|School|"
    r"Association|Agency|Department|Committee|Service|Office|Foundation|Council|Bureau|Ministry|Laboratory|Labs?|"
    r"Group|Bank|Society|Commission|Court|Congress|Senate|Party|Organization|Organisation)\b\.?"
)
_LOCATION_CUES = re.compile(
    r"\b(?:City|County|State|Street|River|Mountain|Mount|Lake|Island|Bay|Valley|Province|Republic|Kingdom|Ocean|Sea)\b"
)
_EVENT_CUES = re.compile(r"\b(?:Conference|Symposium|War|Summit|Olympics|Workshop|Festival|Election)\b")
_ACRONYM_STOP = {"I", "II", "III", "IV", "VI", "VII", "VIII", "IX", "XI", "OK", "AM", "PM", "ID", "US"}
_STOP_PHRASES = {"et al", "e g", "i e"}


def _clean_span(span: str) -> str:
    span = span.strip(" .,;:()[]\"'")
    while True:
        stripped = _TRAILING_NOISE.sub("", _LEADING_NOISE.sub("", span))
        if stripped == span:
            break
        span = stripped
    return span.strip()


def _acronym_expansion(phrase: str, acronym: str) -> str | None:
    """The shortest trailing run of words in phrase whose capital initials spell the acronym."""
    words = phrase.split()
    letters = acronym.rstrip("s").upper()
    for start in range(len(words) - 1, -1, -1):
        initials = "".join(w[0] for w in words[start:] if w[:1].isupper())
        if initials.upper() == letters and len(words) - start >= 2:
            return " ".join(words[start:])
    return None


def _entity_type(name: str, context_before: str) -> str:
    if _YEAR.fullmatch(name):
        return "DATE"
    if re.search(r"\b(?:Dr|Mr|Mrs|Ms|Prof|Sir|Dame)\.?\s*$", context_before):
        return "PERSON"
    if _ORG_CUES.search(name):
        return "ORGANIZATION"
    if _LOCATION_CUES.search(name):
        return "LOCATION"
    if _EVENT_CUES.search(name):
        return "EVENT"
    return "CONCEPT"


@dataclass(frozen=True)
class _Span:
    start: int
    end: int
    name: str
    type: str


def _sentences(text: str) -> list[tuple[int, str]]:
    """The sentences of a text with their start offsets (the pieces of _SENTENCE.split)."""
    found: list[tuple[int, str]] = []
    at = 0
    for match in _SENTENCE.finditer(text):
        found.append((at, text[at : match.start()]))
        at = match.end()
    found.append((at, text[at:]))
    return found


def _sentence_spans(sentence: str, ner: Sequence[NerSpan] = (), known: dict[str, str] | None = None) -> list[_Span]:
    """The entity spans of a sentence; `ner` are the model's spans in the sentence's offsets, `known` the type
    the document's NER gave each normalised name (types the rule-found spans)."""
    spans: list[_Span] = []
    known = known or {}

    def kind_of(name: str, before: str) -> str:
        kind = _entity_type(name, before)
        if kind == "CONCEPT":
            return known.get(name_normalise(name), kind)
        return kind

    taken: list[tuple[int, int]] = []

    def add(start: int, end: int, name: str, kind: str) -> None:
        if any(s < end and start < e for s, e in taken):
            return
        tidy = name_tidy(name)
        if tidy is None:
            return
        name = tidy
        if len(name) < 2 or name.lower() in _STOP_PHRASES or len(name) > 120:
            return
        taken.append((start, end))
        spans.append(_Span(start, end, name, kind))

    for found in ner:
        add(found.start, found.end, found.name, found.type)
    for match in _TITLE_PERSON.finditer(sentence):
        add(match.start(1), match.end(1), match.group(1), "PERSON")
    for match in _YEAR.finditer(sentence):
        add(match.start(), match.end(), match.group(), "DATE")
    for match in _CAPITALISED.finditer(sentence):
        raw = match.group()
        name = _clean_span(raw)
        if " " not in name:
            continue
        offset = match.start() + raw.find(name)
        add(offset, offset + len(name), name, kind_of(name, sentence[: match.start()]))
    for match in _CAMEL.finditer(sentence):
        add(match.start(), match.end(), match.group(), kind_of(match.group(), sentence[: match.start()]))
    for match in _ACRONYM.finditer(sentence):
        name = match.group()
        if name.rstrip("s") in _ACRONYM_STOP or name.isdigit():
            continue
        add(match.start(), match.end(), name, kind_of(name, sentence[: match.start()]))
    spans.sort(key=lambda span: span.start)
    return spans


def _between_verb(text: str) -> tuple[str, bool] | None:
    """The relation type from the words between two mentions (verb lemma), and whether it is passive ('by')."""
    words = re.findall(r"[A-Za-z]+", text)
    if not words or len(words) > 8:
        return None
    for index, word in enumerate(words):
        lemma = verb_lemma(word)
        if lemma is None:
            continue
        if _new_subject(words[:index]):
            return None  # "X and the treasurer is Y": the verb is another subject's, not X's
        rest = [w.lower() for w in words[index + 1 :]]
        if lemma == "IS" and rest[:1] in (["a"], ["an"], ["the"]):
            return "IS_A", False
        if lemma == "IS" and rest[:1] and verb_lemma(rest[0]) not in (None, "IS"):
            lemma = verb_lemma(rest[0]) or lemma
            rest = rest[1:]
        passive = "by" in rest[:2]
        return lemma, passive
    return None


_CLAUSE_JOINS = frozenset("and but or while whereas".split())
_DETERMINERS = frozenset("the a an its his her their our this that these those".split())


def _new_subject(before: Sequence[str]) -> bool:
    """Whether the words before a verb open a clause of its own ("and the treasurer"): a joining word, then a
    determiner and the noun that is the verb's subject."""
    lowered = [word.casefold() for word in before]
    return any(
        word in _CLAUSE_JOINS and i + 2 < len(lowered) and lowered[i + 1] in _DETERMINERS
        for i, word in enumerate(lowered)
    )


_PARTICLES = {"back", "up", "out", "off", "down", "over", "away", "on", "in", "about", "around", "through"}


_STOPWORDS = frozenset(
    "a an the of to in on at by for from with as and or but is was are were be been his her its their our "
    "who whom which that this these those into onto than then".split()
)


_VERB_WORDS = frozenset("made makes stars starred starring born known became becomes".split())


def _verb_form(word: str) -> bool:
    lower = word.casefold()
    return lower in _VERB_WORDS or bool(verb_lemma(word)) or (len(lower) > 5 and lower.endswith("ing"))


def _fragment(phrase: str, known: dict[str, str], name_words: set[str]) -> bool:
    """Whether a keyphrase is a piece of a sentence rather than a thing (see the module docstring, rule 4):
    its last word is a particle ("trees back"); or it mixes capitalised and lowercase words other than as a
    name followed by lowercase common nouns ("marriage to Lothair", "Lotharingia by marriage" are fragments,
    "American writer" is a concept); or it shares a word with a name the NER found without being that name
    or that name followed by common nouns ("film stars Audrey", "Hepburn as Eliza")."""
    words = phrase.split()
    if words[-1].casefold() in _PARTICLES:
        return True
    if name_normalise(phrase) in known:
        return False
    capitals = [w[:1].isupper() for w in words]
    if any(capitals) and not all(capitals):
        cut = capitals.index(False)
        tail = words[cut:]
        if any(capitals[cut:]) or any(w.casefold() in _STOPWORDS or _verb_form(w) for w in tail):
            return True  # ... or a verb after the name: "Amy Hobby made", "Bharathiraja starring"
        head = words[:cut]
        acronym = all(w.isupper() for w in head)  # "LIR trace" beside "SSA LIR": an acronym is a name alone
        if (
            not acronym
            and name_normalise(" ".join(head)) not in known
            and any(w.casefold() in name_words for w in head)
        ):
            return True  # the end of a longer name and common nouns: "Ferries annual note" of "Northwind Ferries"
        return False  # a name and common nouns: a concept
    return any(capitals) and any(word.casefold() in name_words for word in words)


_CODE = re.compile(r"\b[A-Z]\d{1,4}\b")
# Penn tags: a finite verb, a modal or a pronoun makes a phrase a clause; a noun phrase neither starts nor ends
# with a verb, an adverb, a preposition, a conjunction, a particle, a pronoun or a determiner.
_CLAUSE_TAGS = frozenset({"VBD", "VBZ", "VBP", "MD", "PRP", "WP", "EX"})
_EDGE_TAGS = NOT_NAME_START_TAGS | {"DT", "PDT", "WDT", "POS"}
_ADJECTIVE_TAGS = frozenset({"JJ", "JJR", "JJS"})  # nor does a noun phrase end with an adjective


def _clause(phrase: str, texts: Sequence[str], read: NerRead | None) -> bool:
    """Whether a keyphrase is a clause rather than a noun phrase by the model's part-of-speech tags where it
    first occurs (module docstring, rule 4); False when the model is not loaded or the phrase is not found."""
    if read is None:
        return False
    for text, doc in zip(texts, read.docs, strict=False):
        at = text.find(phrase)
        if at < 0:
            at = text.casefold().find(phrase.casefold())
        if at < 0 or at + len(phrase) > len(doc.text):
            continue
        tags = pos_tags(doc)
        offsets, punct = token_offsets(doc)
        first, last = bisect_left(offsets, at), bisect_left(offsets, at + len(phrase))
        inside = [tags[i] for i in range(first, last) if not punct[i]]
        if not inside:
            return False
        return (
            any(tag in _CLAUSE_TAGS or tag == "CD" for tag in inside)  # a count: "reef eleven miles" measures
            or inside[0] in _EDGE_TAGS
            or inside[-1] in _EDGE_TAGS | _ADJECTIVE_TAGS  # "Northwind Ferries annual": cut before its noun
        )
    return False


_LIST_GOES_ON = re.compile(r"\s*(?:,\s*(?:and\s+|or\s+)?|\s(?:and|or)\s+)[A-Z]")


def _place_in_region(text: str, spans: Sequence[NerSpan]) -> list[tuple[str, str]]:
    """(place, region) for each place the text writes with the place it lies in ("Frederick, Maryland"): the two
    stay two nodes (ner._spans_joined), the written pair is the place's alias; a list of places ("Spain,
    Portugal, Greece", "Spain, Portugal and Greece") is not a pair."""
    pairs = []
    for left, right in zip(spans, spans[1:], strict=False):
        if left.type == right.type == "LOCATION" and text[left.end : right.start] == ", ":
            before = text[: left.start].rstrip()
            if not _LIST_GOES_ON.match(text, right.end) and not before.endswith(","):
                pairs.append((left.name, right.name))
    return pairs


def _sentence_start(span: _Span, doc: Any, at: int) -> _Span | None:
    """A rule-found name that opens its sentence, without the words before it the model's tags say are not part
    of a name (the first word of a sentence is capitalised whatever it is: "Later the Harbour Board" -> "Harbour
    Board"); None when no name of two words or more is left. `at` is the sentence's offset in the doc."""
    tags = pos_tags(doc)
    offsets, _ = token_offsets(doc)
    tokens = range(bisect_left(offsets, at + span.start), bisect_left(offsets, at + span.end))
    cut = 0
    while cut < len(tokens) and tags[tokens[cut]] in _EDGE_TAGS:
        cut += 1
    if cut == 0 or not tokens:
        return span
    if cut >= len(tokens) - 1:
        return None
    start = offsets[tokens[cut]] - at
    return _Span(start, span.end, span.name[start - span.start :], span.type)


class OfflineExtractor:
    """Typed NER names, capitalised names, acronyms and keyphrases (YAKE); verb relations, else co-occurrence."""

    name = "offline"
    max_entities_per_sentence = 10

    @staticmethod
    def warm() -> None:
        """Load the NER model and the keyphrase module now rather than in the first extract (1-4 s on a busy
        machine)."""
        import exograph.documents.extraction.keyphrases  # noqa: F401

        ner_model()

    def extract(self, chunks: Sequence[ChunkLike]) -> Extraction:
        entities: list[Entity] = []
        mentions: list[Mention] = []
        relations: list[Relation] = []
        cooccurrence: dict[tuple[str, str], Relation] = {}
        keyphrases = self._keyphrases(chunks)
        read = ner_read([chunk.text for chunk in chunks])
        found = read.spans if read else [[] for _ in chunks]
        known: dict[str, str] = {}
        name_words: set[str] = set()
        for spans_of_chunk in found:
            for named in spans_of_chunk:
                known.setdefault(name_normalise(named.name), named.type)
                if named.type not in ("DATE", "QUANTITY"):
                    name_words.update(word.casefold() for word in named.name.split() if word[:1].isupper())
        texts = [chunk.text for chunk in chunks]
        keyphrases = [
            phrase
            for phrase in keyphrases
            if not _fragment(phrase, known, name_words) and not _clause(phrase, texts, read)
        ]
        codes = Counter(match.group() for text in texts for match in _CODE.finditer(text))
        once = {code for code, count in codes.items() if count < 2}
        for index, (chunk, chunk_ner) in enumerate(zip(chunks, found, strict=True)):
            text = chunk.text
            for match in _ACRONYM_DEFINITION.finditer(text):
                long_name = _acronym_expansion(_clean_span(match.group(1)), match.group(2))
                if long_name:
                    kind = _entity_type(long_name, "")
                    entities.append(Entity(name=long_name, type=kind, aliases=[match.group(2)]))
            chunk_names: dict[str, str] = {}
            for place, region in _place_in_region(text, chunk_ner):
                entities.append(Entity(name=place, type="LOCATION", aliases=[f"{place}, {region}"]))
            for at, sentence in _sentences(text):
                inside = [
                    NerSpan(found_span.start - at, found_span.end - at, found_span.name, found_span.type)
                    for found_span in chunk_ner
                    if at <= found_span.start and found_span.end <= at + len(sentence)
                ]
                spans = [span for span in _sentence_spans(sentence, inside, known) if span.name not in once]
                if spans and read is not None and spans[0].start == 0 and spans[0].name not in {n.name for n in inside}:
                    first = _sentence_start(spans[0], read.docs[index], at)
                    spans = ([first] if first else []) + spans[1:]
                spans = spans[: self.max_entities_per_sentence]
                for span in spans:
                    chunk_names[span.name] = span.type
                for left, right in zip(spans, spans[1:], strict=False):
                    verb = _between_verb(sentence[left.end : right.start])
                    if verb:
                        lemma, passive = verb
                        source, target = (right, left) if passive else (left, right)
                        relations.append(
                            Relation(source.name, source.type, target.name, target.type, lemma, [chunk.id])
                        )
                for i, left in enumerate(spans):
                    for right in spans[i + 1 :]:
                        a, b = sorted((left.name, right.name))
                        if name_normalise(a) == name_normalise(b):
                            continue
                        existing = cooccurrence.get((a, b))
                        if existing:
                            existing.weight += 1
                            if chunk.id not in existing.chunk_ids:
                                existing.chunk_ids.append(chunk.id)
                        else:
                            types = {left.name: left.type, right.name: right.type}
                            cooccurrence[(a, b)] = Relation(a, types[a], b, types[b], "RELATED_TO", [chunk.id], 1)
            lowered = text.casefold()
            found_names = [name.casefold() for name in chunk_names]
            for phrase in keyphrases:
                folded = phrase.casefold()
                # A fragment of a longer name found here ("Computational Linguistics") is not its own entity.
                if folded in lowered and not any(folded in name and folded != name for name in found_names):
                    chunk_names.setdefault(phrase, "CONCEPT")
            for name, kind in chunk_names.items():
                entities.append(Entity(name=name, type=kind))
                mentions.append(Mention(chunk.id, name, kind))
        # Typed verb relations win; co-occurrence only links pairs that have no verb relation.
        linked = {tuple(sorted((name_normalise(r.source), name_normalise(r.target)))) for r in relations}
        for (a, b), relation in cooccurrence.items():
            if tuple(sorted((name_normalise(a), name_normalise(b)))) not in linked:
                relations.append(relation)
        return Extraction(entities=entities, mentions=mentions, relations=relations)

    def _keyphrases(self, chunks: Sequence[ChunkLike]) -> list[str]:
        from exograph.documents.extraction.keyphrases import yake_keywords

        text = "\n".join(chunk.text for chunk in chunks)[:300_000]
        if not text.strip():
            return []
        top = min(80, 10 + len(chunks) // 2)
        try:
            # yake 0.7.3 reads `dedup_lim`, not `dedupLim`: its default 0.9 applies (kept: the graphs hold its output)
            found = yake_keywords(text, lan="en", n=3, dedupLim=0.7, top=top)
        except Exception:  # noqa: BLE001 - keyphrases are a bonus; names and acronyms still work
            logger.warning("yake failed on a document", exc_info=True)
            return []
        phrases = []
        for phrase, _score in found:
            phrase = phrase.strip()
            words = phrase.split()
            if len(words) < 2 or sum(ch.isalpha() for ch in phrase) < 4:
                continue  # single words are too vague; names and acronyms are found by the patterns
            if any(verb_lemma(word) for word in words):
                continue  # "Gal designed": a clause fragment, not a concept
            phrases.append(phrase)
        return phrases
