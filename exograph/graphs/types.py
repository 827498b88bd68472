"""Value types of the graph write API and of search results, plus name normalisation.

The documents and research apps build these and hand them to
`exograph.graphs.services.graph_document_write`.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass
from typing import TypedDict


@dataclass(frozen=True)
class ChunkIn:
    id: str
    text: str
    page: int | None
    ordinal: int
    embedding: list[float]


@dataclass(frozen=True)
class EntityIn:
    name: str
    type: str
    description: str = ""
    aliases: tuple[str, ...] = ()
    embedding: list[float] | None = None


@dataclass(frozen=True)
class MentionIn:
    chunk_id: str
    entity_name: str
    entity_type: str


@dataclass(frozen=True)
class RelationIn:
    source_name: str
    source_type: str
    target_name: str
    target_type: str
    type: str
    chunk_ids: tuple[str, ...] = ()
    weight: int = 1


class EntityHit(TypedDict):
    """One search_entities result (the REST/MCP output shape)."""

    id: str
    name: str
    type: str
    graph_id: str
    graph_name: str
    relevance: float
    context: str


class RelatedEntity(TypedDict, total=False):
    id: str
    name: str
    type: str
    relationship: str
    direction: str  # "outgoing" (entity -> related) or "incoming"
    strength: int
    sources: list[str]
    evidence: list[dict[str, object]]


class WorldEntityView(TypedDict):
    entity: dict[str, object]
    related: list[RelatedEntity]
    count: int


class GraphCounts(TypedDict):
    entities: int
    relations: int
    documents: int


_SPACE = re.compile(r"\s+")
MAX_NAME_LENGTH = 300
MAX_TYPE_LENGTH = 64


def normalize_name(name: str) -> str:
    """The key entities are resolved by: casefolded, accents stripped, whitespace collapsed."""
    if name.isascii():  # the same result without the decomposition (graph mode normalises thousands per query)
        return _SPACE.sub(" ", name.replace("\x00", "").lower()).strip()[:MAX_NAME_LENGTH]
    decomposed = unicodedata.normalize("NFKD", name.replace("\x00", ""))
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _SPACE.sub(" ", stripped.casefold()).strip()[:MAX_NAME_LENGTH]


_QUALIFIER = re.compile(r"\s*\([^()]*\)$")


def title_bare(title: str) -> str:
    """A disambiguated title's bare name, as written ("Whispers (Corina song)" -> "Whispers"); "" when the title
    has no qualifier. Passages and questions name a document by it, so ingest makes it the title entity's alias
    and graph mode links passages by it (graphs.retrieval.title_keys)."""
    bare = _QUALIFIER.sub("", title).strip()
    return bare if bare != title.strip() else ""


def normalize_type(kind: str) -> str:
    """Entity types compare case-insensitively: 'Person', ' PERSON ' and 'person' are one type."""
    return _SPACE.sub("_", normalize_name(kind))[:MAX_TYPE_LENGTH] or "concept"


def entity_id_for(name: str, kind: str) -> str:
    """A stable entity id from the normalised name and type: the same in every graph and the world graph."""
    key = f"{normalize_name(name)}\x1f{normalize_type(kind)}"
    return "ent_" + hashlib.sha256(key.encode()).hexdigest()[:24]
