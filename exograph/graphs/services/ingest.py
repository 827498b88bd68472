"""The ingest write path: a document's chunks, entities, mentions and relations into its graph and the World Graph."""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import redis
from redis.exceptions import LockError

from exograph.accounts.models import User
from exograph.core.errors import (
    ServiceUnavailable,
    TransientError,
    ValidationError,
)
from exograph.core.falkor import falkordb_client
from exograph.core.language import text_language
from exograph.core.scope import Scope
from exograph.graphs import store
from exograph.graphs.models import Graph
from exograph.graphs.selectors import embedder_check
from exograph.graphs.services.graphs import graph_counts_apply, graph_store_ensure, world_graph
from exograph.graphs.services.resolution import types_resolve
from exograph.graphs.store.writes import store_entity_vectors_held
from exograph.graphs.types import (
    ChunkIn,
    EntityIn,
    MentionIn,
    RelationIn,
    entity_id_for,
    normalize_name,
    normalize_type,
)

logger = logging.getLogger(__name__)


@contextmanager
def _document_lock(document_id: str) -> Iterator[None]:
    """One writer per document at a time: a re-write removes the old contribution first, and two
    interleaved re-writes would otherwise count the document twice."""
    try:
        lock = falkordb_client().connection.lock(f"exo:lock:document:{document_id}", timeout=600, blocking_timeout=120)
        acquired = lock.acquire()
    except (redis.ConnectionError, redis.TimeoutError, OSError) as exc:
        raise ServiceUnavailable(store.STORE_DOWN, code="graph_store_unavailable") from exc
    if not acquired:
        raise TransientError(f"Document {document_id} is being written by another worker; retry.")
    try:
        yield
    finally:
        try:
            lock.release()
        except (LockError, redis.ConnectionError):
            logger.warning("lock of document %s expired before release", document_id)


def entity_text(name: str, description: str) -> str:
    return f"{name}. {description}".strip() if description else name


# Entity vectors by (embedder, text): the same names recur across a user's documents ("United States" in
# thousands of passages), and a batch ingest embeds a whole group's entity texts in one call up front.
ENTITY_VECTOR_CACHE_SIZE = 50_000
_entity_vectors: OrderedDict[tuple[str, str], tuple[float, ...]] = OrderedDict()
_entity_vectors_lock = threading.Lock()


def _entity_vectors_embed(
    *, embedder: Any, texts: Sequence[str], held: Callable[[list[str]], Mapping[str, Sequence[float]]] | None = None
) -> list[list[float]]:
    """Vectors for texts, from the bounded cache where it holds them, then from `held` (text -> the vector the
    graph already holds for it, asked for the texts the cache misses), the rest embedded in one call."""
    name = str(getattr(embedder, "name", type(embedder).__name__))
    found: dict[str, tuple[float, ...]] = {}
    with _entity_vectors_lock:
        for text in texts:
            vector = _entity_vectors.get((name, text))
            if vector is not None:
                _entity_vectors.move_to_end((name, text))
                found[text] = vector
    missing = list(dict.fromkeys(t for t in texts if t not in found))
    if missing and held is not None:
        for text, kept in held(missing).items():
            found[text] = tuple(float(x) for x in kept)
    to_embed = [t for t in missing if t not in found]
    if to_embed:
        for text, vector in zip(to_embed, embedder.embed(to_embed), strict=True):
            found[text] = tuple(float(x) for x in vector)
    if missing:
        with _entity_vectors_lock:
            for text in missing:
                _entity_vectors[(name, text)] = found[text]
            while len(_entity_vectors) > ENTITY_VECTOR_CACHE_SIZE:
                _entity_vectors.popitem(last=False)
    return [list(found[text]) for text in texts]


def _held_vectors(
    store_name: str | None, pairs: Sequence[tuple[str, str]], dimension: int | None
) -> Callable[[list[str]], dict[str, list[float]]] | None:
    """For _entity_vectors_embed: text -> the vector the graph already holds for the entity text of these
    (name, description) pairs, where a document wrote that exact name and description (the same text embeds to
    the same vector, so it is not embedded again). None without a store."""
    if store_name is None:
        return None

    def held(wanted: list[str]) -> dict[str, list[float]]:
        want = set(wanted)
        rows = {
            text: {"key": normalize_name(name), "name": name, "description": description}
            for name, description in pairs
            if (text := entity_text(name, description)) in want and normalize_name(name)
        }
        found: dict[str, list[float]] = {}
        for name, description, vector in store_entity_vectors_held(store_name, list(rows.values())):
            if dimension is None or len(vector) == dimension:
                found[entity_text(name, description)] = vector
        return found

    return held


def entity_vectors_prepare(*, graph: Graph, names: Sequence[tuple[str, str]]) -> int:
    """Embed the (name, description) entity texts a coming graph_document_write will need, in one batch,
    into the cache it reads (the batch ingest calls this for a group of documents); texts the graph already
    holds a vector for take it instead. Returns how many texts."""
    pairs = list(dict.fromkeys((" ".join(n.split())[:300], d) for n, d in names if n.strip()))
    texts = list(dict.fromkeys(entity_text(n, d) for n, d in pairs))
    if texts:
        embedder = embedder_check(graph=graph)
        dimension = int(graph.embedding_dim or embedder.dimension)
        _entity_vectors_embed(embedder=embedder, texts=texts, held=_held_vectors(graph.store_name, pairs, dimension))
    return len(texts)


def _prepare(
    *,
    chunks: Sequence[ChunkIn],
    entities: Sequence[EntityIn],
    mentions: Sequence[MentionIn],
    relations: Sequence[RelationIn],
    dimension: int,
    embedder: Any,
    store_name: str | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    chunk_rows: list[dict[str, Any]] = []
    chunk_ids: set[str] = set()
    for chunk in chunks:
        if not chunk.id:
            raise ValidationError("A chunk has no id.", code="invalid_chunk")
        if len(chunk.embedding) != dimension:
            raise ValidationError(
                f"Chunk {chunk.id[:60]} has a {len(chunk.embedding)}-dimension embedding; this graph needs {dimension}.",
                code="embedding_dimension_mismatch",
                hint="Embed chunks with exograph.graphs.embeddings.get_embedder().",
            )
        chunk_ids.add(chunk.id)
        language = text_language(chunk.text)
        chunk_rows.append(
            {
                "id": chunk.id,
                "vkey": store.chunk_vector_key(chunk.id, chunk.embedding),
                "text": chunk.text,
                "page": chunk.page,
                "ordinal": chunk.ordinal,
                "embedding": [float(x) for x in chunk.embedding],
                # core.language: the share of word characters, and whether the passage is mostly non-language
                # (searchable, but kept out of extraction and chat answers)
                "language": round(language.word, 3),
                "nonlanguage": language.flagged,
            }
        )

    merged: dict[str, dict[str, Any]] = {}

    def add(name: str, kind: str, description: str = "", aliases: Sequence[str] = (), vector: Any = None) -> str:
        key = normalize_name(name)
        if not key:
            return ""
        eid = entity_id_for(name, kind)
        row = merged.get(eid)
        surface = " ".join(name.replace("\x00", "").split())[:300]
        if row is None:
            row = merged[eid] = {
                "id": eid,
                "name": surface,
                "key": key,
                "type": normalize_type(kind),
                "description": "",
                "aliases": [],
                "alias_keys": [],
                "embedding": None,
            }
        for alias in [surface, *aliases]:
            alias = " ".join(alias.replace("\x00", "").split())[:300]
            if alias and alias != row["name"] and alias not in row["aliases"]:
                row["aliases"].append(alias)
                alias_key = normalize_name(alias)
                if alias_key and alias_key != key and alias_key not in row["alias_keys"]:
                    row["alias_keys"].append(alias_key)
        if description and len(description) > len(row["description"]):
            row["description"] = description.replace("\x00", "")[:2000]
        if vector is not None and row["embedding"] is None:
            if len(vector) != dimension:
                raise ValidationError(
                    f"Entity {surface[:60]!r} has a {len(vector)}-dimension embedding; this graph needs {dimension}.",
                    code="embedding_dimension_mismatch",
                )
            row["embedding"] = [float(x) for x in vector]
        return eid

    for entity in entities:
        if not normalize_name(entity.name):
            raise ValidationError("An entity has an empty name.", code="invalid_entity")
        add(entity.name, entity.type, entity.description, entity.aliases, entity.embedding)
    mention_rows: list[dict[str, Any]] = []
    seen_mentions: set[tuple[str, str]] = set()
    for mention in mentions:
        eid = add(mention.entity_name, mention.entity_type)
        if eid and mention.chunk_id in chunk_ids and (mention.chunk_id, eid) not in seen_mentions:
            seen_mentions.add((mention.chunk_id, eid))
            mention_rows.append({"chunk_id": mention.chunk_id, "entity_id": eid})
    grouped: dict[tuple[str, str, str], dict[str, Any]] = {}
    for relation in relations:
        source = add(relation.source_name, relation.source_type)
        target = add(relation.target_name, relation.target_type)
        if not source or not target or source == target:
            continue
        kind = store.relation_type(relation.type)
        row = grouped.setdefault(
            (source, target, kind), {"source": source, "target": target, "weight": 0, "chunk_ids": []}
        )
        row["weight"] += max(1, int(relation.weight))
        for chunk_id in relation.chunk_ids:
            if chunk_id in chunk_ids and chunk_id not in row["chunk_ids"]:
                row["chunk_ids"].append(chunk_id)
    relation_rows: dict[str, list[dict[str, Any]]] = {}
    for (_, _, kind), row in grouped.items():
        relation_rows.setdefault(kind, []).append(row)

    missing = [row for row in merged.values() if row["embedding"] is None]
    if missing:
        texts = [entity_text(row["name"], row["description"]) for row in missing]

        held = _held_vectors(store_name, [(row["name"], row["description"]) for row in missing], dimension)
        vectors = _entity_vectors_embed(embedder=embedder, texts=texts, held=held)
        for row, vector in zip(missing, vectors, strict=True):
            row["embedding"] = [float(x) for x in vector]
    for row in merged.values():
        row["vkey"] = store.vector_key(row["id"], row["embedding"])
    return chunk_rows, list(merged.values()), mention_rows, relation_rows


def graph_document_write(
    *,
    graph: Graph,
    document_id: str,
    filename: str,
    contributor: User,
    chunks: Sequence[ChunkIn],
    entities: Sequence[EntityIn],
    mentions: Sequence[MentionIn],
    relations: Sequence[RelationIn],
    provenance: Mapping[str, str] | None = None,
) -> None:
    """Write one document's chunks, entities, mentions and relations into graph (replacing what the
    same document wrote before), and merge them into the World Graph when graph.scope is world.
    provenance (title, source_url, source_type, published) goes on the Document node of both.
    Embeds entities that come without a vector. Raises ValidationError, Conflict (other embedder), 503."""
    if not document_id:
        raise ValidationError("document_id is empty.", code="invalid_document")
    embedder = embedder_check(graph=graph)
    graph_store_ensure(graph=graph)
    targets = [graph]
    if graph.scope == Scope.WORLD and not graph.is_world:
        world = world_graph()
        embedder_check(graph=world)
        graph_store_ensure(graph=world)
        targets.append(world)
    # One node per thing: a name the graph already types takes that type (services/resolution.py).
    entities, mentions, relations = types_resolve(
        graph.store_name, document_id=document_id, entities=entities, mentions=mentions, relations=relations
    )
    chunk_rows, entity_rows, mention_rows, relation_rows = _prepare(
        chunks=chunks,
        entities=entities,
        mentions=mentions,
        relations=relations,
        dimension=int(graph.embedding_dim or embedder.dimension),
        embedder=embedder,
        store_name=graph.store_name,  # the names it already holds keep their vectors (not embedded again)
    )
    with _document_lock(document_id):
        for target in targets:
            delta = store.store_document_write(
                target.store_name,
                document_id=document_id,
                filename=(filename or "").replace("\x00", "")[:255],
                contributor_id=int(contributor.pk),
                chunks=chunk_rows,
                entities=entity_rows,
                mentions=mention_rows,
                relations=relation_rows,
                provenance=provenance,
            )
            graph_counts_apply(graph=target, delta=delta)
    logger.info(
        "document %s written to graph %s (%d chunks, %d entities)", document_id, graph.id, len(chunks), len(entity_rows)
    )


def graph_document_remove(*, graph: Graph, document_id: str) -> None:
    """Remove a document's knowledge from graph and its contributions to the World Graph. Raises 503."""
    with _document_lock(document_id):
        graph_counts_apply(graph=graph, delta=store.store_document_remove(graph.store_name, document_id=document_id))
        if graph.scope == Scope.WORLD and not graph.is_world:
            world = world_graph()
            graph_counts_apply(
                graph=world, delta=store.store_document_remove(world.store_name, document_id=document_id)
            )
