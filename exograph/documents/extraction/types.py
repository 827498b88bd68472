"""The shapes every extractor returns: entities, mentions, relations and the extractor protocol."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

# WORK: a book, film, song, law...; QUANTITY: an amount with its unit (money, percentages, measures).
ENTITY_TYPES = ("PERSON", "ORGANIZATION", "LOCATION", "DATE", "EVENT", "PRODUCT", "WORK", "QUANTITY", "CONCEPT")


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
    # What the document's owner should know about how it was extracted: {"code", "message"} each.
    warnings: list[dict[str, str]] = field(default_factory=list)


class Extractor(Protocol):
    name: str

    def extract(self, chunks: Sequence[ChunkLike]) -> Extraction: ...
