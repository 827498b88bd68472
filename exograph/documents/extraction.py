"""Entity and relation extraction behind one interface: `offline` (default, no network) and `llm`.

Both return an `Extraction` over a document's chunks; `extraction_resolve` then merges
entities by normalised name within the document and keeps the other surface forms as aliases.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from django.conf import settings

from exograph.graphs.types import normalize_name

logger = logging.getLogger(__name__)

ENTITY_TYPES = ("PERSON", "ORGANIZATION", "LOCATION", "DATE", "EVENT", "PRODUCT", "CONCEPT")


class ChunkLike(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def text(self) -> str: ...


@dataclass
class Entity:
    name: str
    type: str
    description: str = ""
    aliases: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Mention:
    chunk_id: str
    name: str
    type: str


@dataclass
class Relation:
    source: str
    source_type: str
    target: str
    target_type: str
    type: str
    chunk_ids: list[str] = field(default_factory=list)
    weight: int = 1


@dataclass
class Extraction:
    entities: list[Entity] = field(default_factory=list)
    mentions: list[Mention] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)


class Extractor(Protocol):
    name: str

    def extract(self, chunks: Sequence[ChunkLike]) -> Extraction: ...


# --- Normalisation and resolution -----------------------------------------------------------


def name_normalise(name: str) -> str:
    """The merge key of an entity name within a document: the graph's key (graphs.types.normalize_name)
    after dropping a leading article, a possessive and surrounding punctuation."""
    text = unicodedata.normalize("NFKC", name).strip()
    text = re.sub(r"[’']s$", "", text)
    text = re.sub(r"^(the|a|an)\s+", "", text, flags=re.IGNORECASE)
    text = text.strip(" .,;:!?\"'()[]{}-–—")
    return normalize_name(text)


def _type_pick(votes: Counter[str]) -> str:
    specific = [(count, kind) for kind, count in votes.items() if kind != "CONCEPT"]
    if specific:
        return max(specific)[1]
    return "CONCEPT"


def extraction_resolve(extraction: Extraction) -> Extraction:
    """Merge entities by normalised name: one canonical name (most used form), one type, the rest as aliases."""
    forms: dict[str, Counter[str]] = defaultdict(Counter)
    types: dict[str, Counter[str]] = defaultdict(Counter)
    descriptions: dict[str, str] = {}
    extra_aliases: dict[str, set[str]] = defaultdict(set)
    for entity in extraction.entities:
        key = name_normalise(entity.name)
        if not key:
            continue
        forms[key][entity.name.strip()] += 1
        types[key][entity.type] += 1
        if entity.description and not descriptions.get(key):
            descriptions[key] = entity.description
        if entity.aliases:
            extra_aliases[key].update(a.strip() for a in entity.aliases if a.strip())
    for mention in extraction.mentions:
        key = name_normalise(mention.name)
        if key in forms:
            forms[key][mention.name.strip()] += 1
            types[key][mention.type] += 1
    # Aliases that are themselves entity names fold into the entity that declared them.
    redirect: dict[str, str] = {}
    for key, aliases in extra_aliases.items():
        for alias in aliases:
            alias_key = name_normalise(alias)
            if alias_key and alias_key != key and alias_key in forms and alias_key not in extra_aliases:
                redirect[alias_key] = key
    for alias_key, key in redirect.items():
        forms[key].update(forms.pop(alias_key))
        types[key].update(types.pop(alias_key))
    canonical: dict[str, tuple[str, str]] = {}
    entities: list[Entity] = []
    for key, counter in forms.items():
        # The canonical name is a form of the entity's own key, never a folded-in acronym.
        own = [item for item in counter.items() if name_normalise(item[0]) == key] or list(counter.items())
        name = max(own, key=lambda item: (item[1], item[0][:1].isupper(), -len(item[0])))[0]
        kind = _type_pick(types[key])
        canonical[key] = (name, kind)
        alias_list = sorted(({form for form in counter if form != name} | extra_aliases.get(key, set())) - {name})
        entities.append(Entity(name=name, type=kind, description=descriptions.get(key, ""), aliases=alias_list[:20]))

    def lookup(raw: str) -> tuple[str, str] | None:
        key = name_normalise(raw)
        key = redirect.get(key, key)
        return canonical.get(key)

    mentions: dict[tuple[str, str], Mention] = {}
    for mention in extraction.mentions:
        found = lookup(mention.name)
        if found:
            mentions[(mention.chunk_id, found[0])] = Mention(mention.chunk_id, found[0], found[1])
    relations: dict[tuple[str, str, str], Relation] = {}
    for relation in extraction.relations:
        source, target = lookup(relation.source), lookup(relation.target)
        if not source or not target or source == target:
            continue
        key3 = (source[0], target[0], relation.type)
        existing = relations.get(key3)
        if existing:
            existing.weight += relation.weight
            existing.chunk_ids.extend(c for c in relation.chunk_ids if c not in existing.chunk_ids)
        else:
            relations[key3] = Relation(
                source[0], source[1], target[0], target[1], relation.type, list(relation.chunk_ids), relation.weight
            )
    return Extraction(entities=entities, mentions=list(mentions.values()), relations=list(relations.values()))


# --- Offline extractor ------------------------------------------------------------------------

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
_COMMON_VERBS = {
    "is": "IS",
    "are": "IS",
    "was": "IS",
    "were": "IS",
    "has": "HAS",
    "have": "HAS",
    "had": "HAS",
    "uses": "USE",
    "used": "USE",
    "use": "USE",
    "using": "USE",
    "developed": "DEVELOP",
    "develops": "DEVELOP",
    "created": "CREATE",
    "creates": "CREATE",
    "founded": "FOUND",
    "acquired": "ACQUIRE",
    "acquires": "ACQUIRE",
    "owns": "OWN",
    "owned": "OWN",
    "proposed": "PROPOSE",
    "proposes": "PROPOSE",
    "introduced": "INTRODUCE",
    "introduces": "INTRODUCE",
    "extends": "EXTEND",
    "extended": "EXTEND",
    "describes": "DESCRIBE",
    "described": "DESCRIBE",
    "includes": "INCLUDE",
    "included": "INCLUDE",
    "contains": "CONTAIN",
    "contained": "CONTAIN",
    "requires": "REQUIRE",
    "required": "REQUIRE",
    "provides": "PROVIDE",
    "provided": "PROVIDE",
    "supports": "SUPPORT",
    "supported": "SUPPORT",
    "implements": "IMPLEMENT",
    "implemented": "IMPLEMENT",
    "compiles": "COMPILE",
    "compiled": "COMPILE",
    "produces": "PRODUCE",
    "produced": "PRODUCE",
    "leads": "LEAD",
    "led": "LEAD",
    "joined": "JOIN",
    "joins": "JOIN",
    "published": "PUBLISH",
    "wrote": "WRITE",
    "written": "WRITE",
    "writes": "WRITE",
    "built": "BUILD",
    "builds": "BUILD",
    "runs": "RUN",
    "ran": "RUN",
    "replaced": "REPLACE",
    "replaces": "REPLACE",
    "based": "BASE",
    "outperforms": "OUTPERFORM",
    "outperformed": "OUTPERFORM",
    "improves": "IMPROVE",
    "improved": "IMPROVE",
    "located": "LOCATE",
    "born": "BEAR",
    "married": "MARRY",
    "won": "WIN",
    "wins": "WIN",
    "signed": "SIGN",
    "signs": "SIGN",
    "issued": "ISSUE",
    "issues": "ISSUE",
    "funded": "FUND",
    "funds": "FUND",
    "employs": "EMPLOY",
    "employed": "EMPLOY",
    "manages": "MANAGE",
    "managed": "MANAGE",
}
_NOT_VERBS = {"need", "speed", "feed", "seed", "bed", "red", "based", "embedded", "hundred", "indeed"}


def _verb_lemma(word: str) -> str | None:
    lower = word.lower()
    if lower in _COMMON_VERBS:
        return _COMMON_VERBS[lower]
    if not word.isalpha() or not word.islower() or len(word) < 5 or lower in _NOT_VERBS:
        return None
    if lower.endswith("ied"):
        return (lower[:-3] + "y").upper()
    if lower.endswith("ed"):
        stem = lower[:-2]
        if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] not in "ls":
            stem = stem[:-1]
        elif stem.endswith(("at", "iz", "ur", "uc", "ov", "iv", "ag", "ud")):
            stem += "e"
        return stem.upper()
    if lower.endswith("izes") or lower.endswith("ates"):
        return lower[:-1].upper()
    return None


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


def _sentence_spans(sentence: str) -> list[_Span]:
    spans: list[_Span] = []
    taken: list[tuple[int, int]] = []

    def add(start: int, end: int, name: str, kind: str) -> None:
        if any(s < end and start < e for s, e in taken):
            return
        if len(name) < 2 or name.lower() in _STOP_PHRASES or len(name) > 120:
            return
        taken.append((start, end))
        spans.append(_Span(start, end, name, kind))

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
        add(offset, offset + len(name), name, _entity_type(name, sentence[: match.start()]))
    for match in _CAMEL.finditer(sentence):
        add(match.start(), match.end(), match.group(), _entity_type(match.group(), sentence[: match.start()]))
    for match in _ACRONYM.finditer(sentence):
        name = match.group()
        if name.rstrip("s") in _ACRONYM_STOP or name.isdigit():
            continue
        add(match.start(), match.end(), name, _entity_type(name, sentence[: match.start()]))
    spans.sort(key=lambda span: span.start)
    return spans


def _between_verb(text: str) -> tuple[str, bool] | None:
    """The relation type from the words between two mentions (verb lemma), and whether it is passive ('by')."""
    words = re.findall(r"[A-Za-z]+", text)
    if not words or len(words) > 8:
        return None
    for index, word in enumerate(words):
        lemma = _verb_lemma(word)
        if lemma is None:
            continue
        rest = [w.lower() for w in words[index + 1 :]]
        if lemma == "IS" and rest[:1] in (["a"], ["an"], ["the"]):
            return "IS_A", False
        if lemma == "IS" and rest[:1] and _verb_lemma(rest[0]) not in (None, "IS"):
            lemma = _verb_lemma(rest[0]) or lemma
            rest = rest[1:]
        passive = "by" in rest[:2]
        return lemma, passive
    return None


class OfflineExtractor:
    """Keyphrases (YAKE), capitalised multi-word names and acronyms; verb relations, else co-occurrence."""

    name = "offline"
    max_entities_per_sentence = 8

    def extract(self, chunks: Sequence[ChunkLike]) -> Extraction:
        entities: list[Entity] = []
        mentions: list[Mention] = []
        relations: list[Relation] = []
        cooccurrence: dict[tuple[str, str], Relation] = {}
        keyphrases = self._keyphrases(chunks)
        for chunk in chunks:
            text = chunk.text
            for match in _ACRONYM_DEFINITION.finditer(text):
                long_name = _acronym_expansion(_clean_span(match.group(1)), match.group(2))
                if long_name:
                    kind = _entity_type(long_name, "")
                    entities.append(Entity(name=long_name, type=kind, aliases=[match.group(2)]))
            chunk_names: dict[str, str] = {}
            for sentence in _SENTENCE.split(text):
                spans = _sentence_spans(sentence)[: self.max_entities_per_sentence]
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
        import yake

        text = "\n".join(chunk.text for chunk in chunks)[:300_000]
        if not text.strip():
            return []
        top = min(80, 10 + len(chunks) // 2)
        try:
            found = yake.KeywordExtractor(lan="en", n=3, dedupLim=0.7, top=top).extract_keywords(text)
        except Exception:  # noqa: BLE001 - keyphrases are a bonus; names and acronyms still work
            logger.warning("yake failed on a document", exc_info=True)
            return []
        phrases = []
        for phrase, _score in found:
            phrase = phrase.strip()
            words = phrase.split()
            if len(words) < 2 or sum(ch.isalpha() for ch in phrase) < 4:
                continue  # single words are too vague; names and acronyms are found by the patterns
            if any(_verb_lemma(word) for word in words):
                continue  # "Gal designed": a clause fragment, not a concept
            phrases.append(phrase)
        return phrases


# --- LLM extractor ------------------------------------------------------------------------------

EXTRACTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["entities", "relations"],
    "properties": {
        "entities": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["name", "type", "description"],
                "properties": {
                    "name": {"type": "string"},
                    "type": {"type": "string", "enum": list(ENTITY_TYPES)},
                    "description": {"type": "string"},
                },
            },
        },
        "relations": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["source", "target", "type"],
                "properties": {
                    "source": {"type": "string"},
                    "target": {"type": "string"},
                    "type": {"type": "string"},
                },
            },
        },
    },
}

_SYSTEM_PROMPT = (
    "You extract a knowledge graph from a passage of a document. Return JSON matching the schema: "
    "entities (name as written in the passage, type one of " + ", ".join(ENTITY_TYPES) + ", a one-sentence "
    "description) and relations between those entities (source and target are entity names from your list, "
    "type is a short UPPER_SNAKE_CASE verb such as DEVELOPED or PART_OF). Only use facts stated in the passage."
)


class InvalidLLMOutput(ValueError):
    pass


def llm_output_validate(content: str) -> tuple[list[Entity], list[tuple[str, str, str]]]:
    """Parse and check the model's JSON; raises InvalidLLMOutput on anything off-schema."""
    import json

    try:
        data = json.loads(content)
    except ValueError as exc:
        raise InvalidLLMOutput(f"not JSON: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("entities"), list):
        raise InvalidLLMOutput("missing entities list")
    relations_raw = data.get("relations", [])
    if not isinstance(relations_raw, list):
        raise InvalidLLMOutput("relations is not a list")
    entities: list[Entity] = []
    for item in data["entities"]:
        if not isinstance(item, dict):
            raise InvalidLLMOutput("entity is not an object")
        name, kind = item.get("name"), item.get("type")
        if not isinstance(name, str) or not name.strip() or len(name) > 200:
            raise InvalidLLMOutput("entity name missing or too long")
        if not isinstance(kind, str) or kind.upper() not in ENTITY_TYPES:
            raise InvalidLLMOutput(f"entity type {kind!r} not allowed")
        description = item.get("description", "")
        entities.append(
            Entity(name=name.strip(), type=kind.upper(), description=str(description)[:500] if description else "")
        )
    names = {name_normalise(e.name) for e in entities}
    relations: list[tuple[str, str, str]] = []
    for item in relations_raw:
        if not isinstance(item, dict):
            raise InvalidLLMOutput("relation is not an object")
        source, target, kind = item.get("source"), item.get("target"), item.get("type")
        if not all(isinstance(v, str) and v.strip() for v in (source, target, kind)):
            raise InvalidLLMOutput("relation fields missing")
        assert isinstance(source, str) and isinstance(target, str) and isinstance(kind, str)  # noqa: S101 - narrowing
        if name_normalise(source) not in names or name_normalise(target) not in names:
            raise InvalidLLMOutput("relation endpoint is not an extracted entity")
        relation_type = re.sub(r"[^A-Z0-9]+", "_", kind.upper()).strip("_")[:60] or "RELATED_TO"
        relations.append((source.strip(), target.strip(), relation_type))
    return entities, relations


class LLMExtractor:
    """Structured extraction through the OpenAI-compatible LLM; invalid output retried once, then offline."""

    name = "llm"

    def __init__(self, fallback: Extractor | None = None) -> None:
        self.fallback = fallback or OfflineExtractor()

    def extract(self, chunks: Sequence[ChunkLike]) -> Extraction:
        from exograph.chat.llm import LLMError, llm_chat_complete

        result = Extraction()
        failed: list[ChunkLike] = []
        for chunk in chunks:
            parsed = None
            for _attempt in range(2):
                try:
                    reply = llm_chat_complete(
                        messages=[
                            {"role": "system", "content": _SYSTEM_PROMPT},
                            {"role": "user", "content": chunk.text},
                        ],
                        json_schema={"name": "knowledge_graph", "schema": EXTRACTION_SCHEMA},
                    )
                    parsed = llm_output_validate(reply.content)
                    break
                except InvalidLLMOutput as exc:
                    logger.info("llm extraction output invalid for chunk %s: %s", chunk.id, exc)
                except LLMError as exc:
                    logger.warning("llm extraction failed for chunk %s: %s", chunk.id, exc.message)
                    break
            if parsed is None:
                failed.append(chunk)
                continue
            entities, relations = parsed
            types = {name_normalise(e.name): e.type for e in entities}
            result.entities.extend(entities)
            result.mentions.extend(Mention(chunk.id, e.name, e.type) for e in entities)
            result.relations.extend(
                Relation(s, types[name_normalise(s)], t, types[name_normalise(t)], kind, [chunk.id])
                for s, t, kind in relations
            )
        if failed:
            offline = self.fallback.extract(failed)
            result.entities.extend(offline.entities)
            result.mentions.extend(offline.mentions)
            result.relations.extend(offline.relations)
        return result


def extractor_get(name: str | None = None) -> Extractor:
    """The configured extractor (settings.DOCUMENTS_EXTRACTOR): offline or llm."""
    chosen = name or settings.DOCUMENTS_EXTRACTOR
    if chosen == "llm":
        return LLMExtractor()
    return OfflineExtractor()


# In documents longer than this many chunks, a CONCEPT or DATE seen in one chunk only, with no typed
# relation, is dropped (with its co-occurrence edges): mostly noise ("Line 5", "Enter Form"), and each
# entity costs an embedding in the graph write. Its chunk stays searchable by full text and vector.
PRUNE_MIN_CHUNKS = 20
_PRUNABLE_TYPES = ("CONCEPT", "DATE")


def extraction_prune(extraction: Extraction, *, chunk_count: int) -> Extraction:
    """Drop single-mention CONCEPT/DATE entities without typed relations (only in long documents)."""
    if chunk_count <= PRUNE_MIN_CHUNKS:
        return extraction
    mentions = Counter(m.name for m in extraction.mentions)
    typed = {name for r in extraction.relations if r.type != "RELATED_TO" for name in (r.source, r.target)}
    keep = {
        e.name
        for e in extraction.entities
        if mentions[e.name] >= 2 or e.name in typed or e.type not in _PRUNABLE_TYPES or e.description
    }
    return Extraction(
        entities=[e for e in extraction.entities if e.name in keep],
        mentions=[m for m in extraction.mentions if m.name in keep],
        relations=[r for r in extraction.relations if r.source in keep and r.target in keep],
    )


def document_extract(chunks: Sequence[ChunkLike], *, extractor: Extractor | None = None) -> Extraction:
    """Extract, resolve (merge by normalised name) and prune entities and relations from a document's chunks."""
    resolved = extraction_resolve((extractor or extractor_get()).extract(chunks))
    return extraction_prune(resolved, chunk_count=len(chunks))


def extraction_to_json(extraction: Extraction) -> dict[str, Any]:
    """A JSON-able form, to keep an extraction between pipeline stages."""
    return {
        "entities": [[e.name, e.type, e.description, list(e.aliases)] for e in extraction.entities],
        "mentions": [[m.chunk_id, m.name, m.type] for m in extraction.mentions],
        "relations": [
            [r.source, r.source_type, r.target, r.target_type, r.type, list(r.chunk_ids), r.weight]
            for r in extraction.relations
        ],
    }


def extraction_from_json(data: dict[str, Any]) -> Extraction:
    return Extraction(
        entities=[
            Entity(name, kind, description, list(aliases)) for name, kind, description, aliases in data["entities"]
        ],
        mentions=[Mention(chunk_id, name, kind) for chunk_id, name, kind in data["mentions"]],
        relations=[
            Relation(source, source_type, target, target_type, kind, list(chunk_ids), int(weight))
            for source, source_type, target, target_type, kind, chunk_ids, weight in data["relations"]
        ],
    )
