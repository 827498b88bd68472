"""Resolution (merge by normalised name), pruning and the JSON form kept between pipeline stages."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from exograph.documents.extraction.types import Entity, Extraction, Mention, Relation
from exograph.graphs.types import normalize_name

_KEY_POSSESSIVE = re.compile(r"[’']s$")
_KEY_ARTICLE = re.compile(r"^(the|a|an)\s+", re.IGNORECASE)


@lru_cache(maxsize=65_536)
def name_normalise(name: str) -> str:
    """The merge key of an entity name within a document: the graph's key (graphs.types.normalize_name)
    after dropping a leading article, a possessive and surrounding punctuation. Kept per process (a pure function
    of the name: extraction asks it of the same names many times a document)."""
    text = unicodedata.normalize("NFKC", name).strip()
    text = _KEY_POSSESSIVE.sub("", text)
    text = _KEY_ARTICLE.sub("", text)
    text = text.strip(" .,;:!?\"'()[]{}-–—")
    return normalize_name(text)


_POSSESSIVE = re.compile(r"[’']s?$")
_LOWER_PLURAL = re.compile(r"^[a-z]{3,}s$")


def _singular(word: str) -> str:
    """English plural to singular for a lowercase common noun: -ies -> -y, -ches/-shes/-sses/-xes/-zes -> drop -es,
    else drop -s; words ending -ss, -us, -is are not plurals."""
    if word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "sses", "xes", "zes")):
        return word[:-2]
    return word[:-1]


def name_variant_key(name: str) -> str:
    """The plural-folded merge key of a name: name_normalise with the last word made singular when that word
    is a lowercase plural as written ("trace trees" -> "trace tree"). A capitalised last word is left alone
    ("Jones", "Wales", "Trace Trees" as written in a heading): names are not plurals. "" when the name has
    no plural to fold."""
    words = unicodedata.normalize("NFKC", name).strip().split()
    if len(words) < 2 or not _LOWER_PLURAL.match(words[-1]):
        return ""
    return name_normalise(" ".join([*words[:-1], _singular(words[-1])]))


_ACRONYM_PLURAL = re.compile(r"[A-Z]{2,}s")


def _acronym_singular(name: str) -> str:
    """The merge key of an acronym's plural ("VMs" -> "VM", "CDs" -> "CD"); "" for any other name."""
    name = name.strip()
    return name_normalise(name[:-1]) if _ACRONYM_PLURAL.fullmatch(name) else ""


def _unspaced(name: str) -> str:
    """A merge key that ignores spaces and hyphens: a PDF's line break ("Trace- Monkey") or letter spacing ("WIP O
    Copyright Treaty") splits a word the document also writes whole ("TraceMonkey", "WIPO Copyright Treaty"); a
    name it writes only one way keeps its own key. The key is a marker plus the letters, never a written name's."""
    letters = re.sub(r"[\s-]+", "", name_normalise(name))
    return "\x00" + letters if letters else ""


_OWNER = re.compile(r"^\S+[’']s\s+(\S.*)$")
_INITIAL = re.compile(r"^[A-Z]\.\s*")


def _short_forms(
    forms: dict[str, Counter[str]], types: dict[str, Counter[str]], key_of: Callable[[str], str]
) -> dict[str, str]:
    """{key: key of the entity it is a short form of} within a document: an owner's thing ("Apple's WebKit") is
    the thing when the document names it alone ("WebKit"); a surname alone ("Riloff") or with an initial ("E.
    Riloff") is the one person of the document with that surname ("Ellen Riloff"), if only one."""
    people: dict[str, list[str]] = defaultdict(list)
    for key, counter in forms.items():
        name_of = max(counter, key=counter.__getitem__)
        words = name_of.split()
        given = key_of(" ".join(words[:-1]))
        if (
            _type_pick(types[key]) == "PERSON"
            and 2 <= len(words) <= 4
            and all(w[:1].isupper() for w in words)
            # "Longwang Taiwan": a name and a place side by side, no person ("Norodom Sihanouk" is one)
            and not (given in forms and _type_pick(types.get(key_of(words[-1]), Counter())) != "PERSON")
            and not _INITIAL.match(name_of + " ")  # "E. Riloff" is a short form itself
            and not _OWNER.match(name_of)  # "Pall's LuaJIT" is LuaJIT
        ):
            people[key_of(words[-1])].append(key)
    folded: dict[str, str] = {}
    for key, counter in forms.items():
        name = max(counter, key=counter.__getitem__)
        if (owned := _OWNER.match(name)) and (thing := key_of(owned.group(1))) in forms and thing != key:
            folded[key] = thing
            continue
        bare = _INITIAL.sub("", name)
        if " " in bare or not bare[:1].isupper() or key in people.get(key_of(bare), []):
            continue
        full = people.get(key_of(bare), [])
        if len(full) == 1 and full[0] != key and (bare == name or full[0].startswith(name[0].casefold())):
            folded[key] = full[0]
    return {key: target for key, target in folded.items() if target not in folded}


def _possessive(name: str) -> bool:
    return bool(_POSSESSIVE.search(name.strip()))


_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
_TITLE_ARTICLE = re.compile(r"^(?:The|A|An)\s+")


def article_bare(name: str) -> str:
    """The name without a leading article (the/a/an, any case): "the Harbour Board" -> "Harbour Board"."""
    bare = _ARTICLE.sub("", name.strip())
    return bare or name.strip()


def _canonical(name: str, *, plural: bool, title: bool = False) -> str:
    """The form an entity is written to the graph under, the same in every document so that the graph's stable
    entity ids (graphs.types.entity_id_for) merge it across documents: a leading article dropped ("the Harbour
    Board" -> "Harbour Board") unless `title` (a WORK whose capitalised article is part of its title: "The
    Godfather"), the possessive dropped ("Babbage's" -> "Babbage") and, when the entity was written as a lowercase plural (`plural`), its last word made singular in
    the chosen form's case ("trace trees" -> "trace tree", "Trace Trees" -> "Trace Tree")."""
    name = name.strip()
    if not (title and _TITLE_ARTICLE.match(name)):
        name = article_bare(name)
    if _possessive(name) and (bare := _POSSESSIVE.sub("", name).rstrip()):
        name = bare
    words = name.split()
    if plural and len(words) >= 2 and _LOWER_PLURAL.match(words[-1].lower()):
        singular = _singular(words[-1].lower())
        last = singular.capitalize() if words[-1][:1].isupper() else singular
        name = " ".join([*words[:-1], last if not words[-1].isupper() else singular.upper()])
    return name


class _Keys:
    """Union of merge keys: one node per thing within a document (see extraction_resolve)."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, key: str) -> str:
        root = key
        while self.parent.get(root, root) != root:
            root = self.parent[root]
        while key != root:  # path compression
            self.parent[key], key = root, self.parent.get(key, key)
        return root

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:  # the root is a written name's key, never an _unspaced marker key
            low, high = sorted((ra, rb), key=lambda k: (k.startswith("\x00"), k))
            self.parent[high] = low

    def add(self, name: str) -> None:
        key = name_normalise(name)
        if not key:
            return
        self.parent.setdefault(key, key)
        for variant in (name_variant_key(name), _acronym_singular(name), _unspaced(name)):
            if variant and variant != key:
                self.parent.setdefault(variant, variant)
                self.union(key, variant)

    def of(self, name: str) -> str:
        key = name_normalise(name)
        return self.find(key) if key else ""


def _type_pick(votes: Counter[str]) -> str:
    specific = [(count, kind) for kind, count in votes.items() if kind != "CONCEPT"]
    if specific:
        return max(specific)[1]
    return "CONCEPT"


def extraction_resolve(extraction: Extraction) -> Extraction:
    """Merge entities that name one thing: one canonical name, one type, the other surface forms as aliases
    (their provenance: every form the document wrote is kept on the entity).

    The merge rule: two names are one entity when they have the same `name_normalise` key (case and accents
    folded, a leading article, a possessive "'s" and surrounding punctuation dropped: "Babbage's" = "Babbage",
    "The Beatles" = "Beatles") or when one is the other's lowercase plural ("trace trees" = "trace tree":
    name_variant_key), or an acronym's plural ("VMs" = "VM"), or the same letters but for spaces and hyphens
    ("Trace- Monkey" = "TraceMonkey": _unspaced), transitively ("Trace Trees", "trace trees" and "trace tree" are
    one). An acronym an entity declares ("Document Object Model (DOM)") folds in too, and so do short forms
    (_short_forms): a surname alone or after an initial ("Riloff", "E. Riloff") into the document's one person of
    that surname ("Ellen Riloff"), an owner's thing ("Pall's LuaJIT") into the thing named alone ("LuaJIT"); the
    entity keeps its own type and the short form as an alias. The canonical name is the most used form, preferring
    one without a possessive, then a capitalised one, then the shortest, written as `_canonical` (no leading
    article, unless the entity is a WORK whose capitalised article is part of its title: "The Godfather"; no
    possessive; singular when a form was a lowercase plural) so that the same thing gets the same graph node from
    every document. A leading article (the/a/an, any case) never separates two nodes: within a document it is out
    of the key (`name_normalise`), in the display name it is dropped as above, and across documents and into the
    World Graph a name is joined to the node the graph holds under its article variant
    (graphs.services.resolution)."""
    keys = _Keys()
    for entity in extraction.entities:
        keys.add(entity.name)
    for mention in extraction.mentions:
        keys.add(mention.name)
    forms: dict[str, Counter[str]] = defaultdict(Counter)
    types: dict[str, Counter[str]] = defaultdict(Counter)
    descriptions: dict[str, str] = {}
    extra_aliases: dict[str, set[str]] = defaultdict(set)
    for entity in extraction.entities:
        key = keys.of(entity.name)
        if not key:
            continue
        forms[key][entity.name.strip()] += 1
        types[key][entity.type] += 1
        if entity.description and not descriptions.get(key):
            descriptions[key] = entity.description
        if entity.aliases:
            extra_aliases[key].update(a.strip() for a in entity.aliases if a.strip())
    for mention in extraction.mentions:
        key = keys.of(mention.name)
        if key in forms:
            forms[key][mention.name.strip()] += 1
            types[key][mention.type] += 1
    # Aliases that are themselves entity names fold into the entity that declared them.
    redirect: dict[str, str] = {}
    for key, aliases in extra_aliases.items():
        for alias in aliases:
            alias_key = keys.of(alias)
            if alias_key and alias_key != key and alias_key in forms and alias_key not in extra_aliases:
                redirect[alias_key] = key
    for alias_key, key in redirect.items():
        forms[key].update(forms.pop(alias_key))
        types[key].update(types.pop(alias_key))
    # Short forms fold into the entity they name (_short_forms); the entity keeps its own type.
    for short_key, key in _short_forms(forms, types, keys.of).items():
        if short_key in forms and key in forms and short_key not in extra_aliases:
            forms[key].update(forms.pop(short_key))
            types.pop(short_key)
            redirect[short_key] = key
    canonical: dict[str, tuple[str, str]] = {}
    entities: list[Entity] = []
    for key, counter in forms.items():
        # The canonical name is a form of the entity's own key, never a folded-in acronym.
        own = [item for item in counter.items() if keys.of(item[0]) == key] or list(counter.items())
        name = max(own, key=lambda item: (not _possessive(item[0]), item[1], item[0][:1].isupper(), -len(item[0])))[0]
        kind = _type_pick(types[key])
        name = _canonical(name, plural=any(name_variant_key(form) for form in counter), title=kind == "WORK")
        canonical[key] = (name, kind)
        alias_list = sorted(({form for form in counter if form != name} | extra_aliases.get(key, set())) - {name})
        entities.append(Entity(name=name, type=kind, description=descriptions.get(key, ""), aliases=alias_list[:20]))

    def lookup(raw: str) -> tuple[str, str] | None:
        key = keys.of(raw)
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
    return Extraction(
        entities=entities,
        mentions=list(mentions.values()),
        relations=list(relations.values()),
        warnings=list(extraction.warnings),
    )


# In documents longer than this many chunks, a CONCEPT, DATE or QUANTITY seen in one chunk only, with no typed
# relation, is dropped (with its co-occurrence edges): mostly noise ("Line 5", "Enter Form"), and each
# entity costs an embedding in the graph write. Its chunk stays searchable by full text and vector.
PRUNE_MIN_CHUNKS = 20
_PRUNABLE_TYPES = ("CONCEPT", "DATE", "QUANTITY")


def extraction_prune(extraction: Extraction, *, chunk_count: int) -> Extraction:
    """Drop single-mention CONCEPT/DATE/QUANTITY entities without typed relations (only in long documents)."""
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
        warnings=list(extraction.warnings),
    )


def extraction_to_json(extraction: Extraction) -> dict[str, Any]:
    """A JSON-able form, to keep an extraction between pipeline stages."""
    return {
        "entities": [[e.name, e.type, e.description, list(e.aliases)] for e in extraction.entities],
        "mentions": [[m.chunk_id, m.name, m.type] for m in extraction.mentions],
        "relations": [
            [r.source, r.source_type, r.target, r.target_type, r.type, list(r.chunk_ids), r.weight]
            for r in extraction.relations
        ],
        "warnings": [dict(w) for w in extraction.warnings],
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
        warnings=[dict(w) for w in data.get("warnings", [])],
    )
