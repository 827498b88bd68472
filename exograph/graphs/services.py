"""Every write to graphs: rows in PostgreSQL, knowledge in FalkorDB, the world-graph merge."""

from __future__ import annotations

import logging
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import redis
from django.db import IntegrityError, transaction
from django.db.models import F
from django.db.models.functions import Greatest
from redis.exceptions import LockError

from billing.models import UsageSource
from billing.services import earnings_record
from exograph.accounts.models import User
from exograph.core.errors import (
    Conflict,
    ExoGraphError,
    PermissionDenied,
    ServiceUnavailable,
    TransientError,
    ValidationError,
)
from exograph.core.falkor import falkordb_client
from exograph.core.language import text_language
from exograph.core.scope import Scope
from exograph.graphs import store
from exograph.graphs.embeddings import chunk_embedding_text, get_embedder
from exograph.graphs.models import WORLD_GRAPH_ID, Graph, GraphKind
from exograph.graphs.retrieval import entity_search
from exograph.graphs.selectors import embedder_check, graph_get_for_user, world_entity_read
from exograph.graphs.types import (
    ChunkIn,
    EntityHit,
    EntityIn,
    GraphCounts,
    MentionIn,
    RelationIn,
    WorldEntityView,
    entity_id_for,
    normalize_name,
    normalize_type,
)

logger = logging.getLogger(__name__)

MAX_GRAPH_NAME = 200
DEFAULT_GRAPH_NAMES = {
    (Scope.PRIVATE, GraphKind.DOCUMENT): "My documents",
    (Scope.WORLD, GraphKind.DOCUMENT): "My world documents",
    (Scope.PRIVATE, GraphKind.RESEARCH): "My research",
    (Scope.WORLD, GraphKind.RESEARCH): "My world research",
    (Scope.PRIVATE, GraphKind.MANUAL): "My graph",
    (Scope.WORLD, GraphKind.MANUAL): "My world graph",
}


def _clean_name(name: str) -> str:
    cleaned = " ".join((name or "").replace("\x00", "").split())
    if not cleaned:
        raise ValidationError("The graph name is empty.", code="invalid_name", hint="Give the graph a name.")
    if len(cleaned) > MAX_GRAPH_NAME:
        raise ValidationError(
            f"The graph name is longer than {MAX_GRAPH_NAME} characters.",
            code="invalid_name",
            hint=f"Use at most {MAX_GRAPH_NAME} characters.",
        )
    if any(unicodedata.category(ch) == "Cc" for ch in cleaned):
        raise ValidationError("The graph name contains control characters.", code="invalid_name")
    return cleaned


def graph_store_ensure(*, graph: Graph) -> None:
    """Create the graph's FalkorDB store and indexes if missing; records the embedder on first use."""
    embedder = embedder_check(graph=graph)
    if not graph.embedding_model:
        graph.embedding_model, graph.embedding_dim = embedder.name, embedder.dimension
        if graph.pk and Graph.objects.filter(pk=graph.pk).exists():
            Graph.objects.filter(pk=graph.pk, embedding_model="").update(
                embedding_model=embedder.name, embedding_dim=embedder.dimension
            )
    store.store_ensure(graph.store_name, dimension=int(graph.embedding_dim or embedder.dimension))


def graph_stores_ensure_all() -> tuple[int, list[str]]:
    """Bring every graph's store up to the current indexes (e.g. the CJK `terms` field and its
    backfill, store/cjk.py); run at start-up. Returns (graphs ensured, ids of those that failed:
    a store with another embedder or an unreachable one is reported, never fatal)."""
    done, failed = 0, []
    for graph in Graph.objects.order_by("created"):
        try:
            graph_store_ensure(graph=graph)
        except (ExoGraphError, redis.RedisError) as exc:
            logger.warning("graph %s store not ensured: %s", graph.id, type(exc).__name__)
            failed.append(graph.id)
        else:
            done += 1
    return done, failed


def world_graph() -> Graph:
    return Graph.objects.get(id=WORLD_GRAPH_ID)


def graph_create(*, actor: User, name: str, scope: Scope, kind: GraphKind = GraphKind.MANUAL) -> Graph:
    """Create an empty graph owned by actor, with its FalkorDB store. Raises Conflict, ValidationError, 503."""
    cleaned = _clean_name(name)
    if kind == GraphKind.WORLD:
        raise ValidationError("Only the platform has a graph of type world.", code="invalid_kind")
    if Graph.objects.filter(owner=actor, name=cleaned).exists():
        raise Conflict(
            f"You already have a graph named {cleaned!r}.", code="graph_name_taken", hint="Choose another name."
        )
    graph = Graph(owner=actor, name=cleaned, scope=Scope(scope), kind=kind)
    graph_store_ensure(graph=graph)  # before the row: a store that is down leaves nothing behind
    try:
        with transaction.atomic():
            graph.save(force_insert=True)
    except IntegrityError as exc:
        store.store_drop(graph.store_name)
        raise Conflict(
            f"You already have a graph named {cleaned!r}.", code="graph_name_taken", hint="Choose another name."
        ) from exc
    logger.info("graph %s created by user %s", graph.id, actor.id)
    return graph


def _writable(*, actor: User, graph_id: str) -> Graph:
    return graph_get_for_user(user=actor, graph_id=graph_id, write=True)


def graph_rename(*, actor: User, graph_id: str, name: str) -> Graph:
    """Rename one of actor's graphs. Raises NotFound, PermissionDenied, Conflict, ValidationError."""
    graph = _writable(actor=actor, graph_id=graph_id)
    cleaned = _clean_name(name)
    if Graph.objects.filter(owner=actor, name=cleaned).exclude(pk=graph.pk).exists():
        raise Conflict(
            f"You already have a graph named {cleaned!r}.", code="graph_name_taken", hint="Choose another name."
        )
    graph.name = cleaned
    graph.save(update_fields=["name", "modified"])
    return graph


def graph_delete(*, actor: User, graph_id: str) -> None:
    """Delete one of actor's graphs: its world-graph contributions, the row, then its store (after commit)."""
    graph = _writable(actor=actor, graph_id=graph_id)
    if graph.is_world:
        raise PermissionDenied("The World Graph cannot be deleted.", code="world_graph_protected")
    if graph.scope == Scope.WORLD:
        world = world_graph()
        # Un-merge first: if the store is down this raises 503 and nothing is deleted.
        for document_id in store.store_document_ids(graph.store_name):
            graph_counts_apply(
                graph=world, delta=store.store_document_remove(world.store_name, document_id=document_id)
            )
    store_name = graph.store_name
    with transaction.atomic():
        graph.delete()
        transaction.on_commit(lambda: _drop_quietly(store_name))
    logger.info("graph %s deleted by user %s", graph_id, actor.id)


def _drop_quietly(store_name: str) -> None:
    try:
        store.store_drop(store_name)
    except Exception:  # the row is gone; an orphan store is harmless and logged
        logger.exception("could not drop graph store %s", store_name)


def graph_default_for_user(*, actor: User, scope: Scope, kind: GraphKind = GraphKind.DOCUMENT) -> Graph:
    """actor's default graph of this scope and kind, created on first use (race-safe)."""
    scope = Scope(scope)
    existing = Graph.objects.filter(owner=actor, scope=scope, kind=kind, is_default=True).first()
    if existing is not None:
        return existing
    base = DEFAULT_GRAPH_NAMES.get((scope, GraphKind(kind)), f"My {kind} graph")
    embedder = get_embedder()
    for attempt in range(1, 20):
        name = base if attempt == 1 else f"{base} {attempt}"
        graph = Graph(
            owner=actor,
            name=name,
            scope=scope,
            kind=kind,
            is_default=True,
            embedding_model=embedder.name,
            embedding_dim=embedder.dimension,
        )
        try:
            with transaction.atomic():
                graph.save(force_insert=True)
        except IntegrityError:
            # Another request made the default first, or the name is taken by another graph.
            existing = Graph.objects.filter(owner=actor, scope=scope, kind=kind, is_default=True).first()
            if existing is not None:
                return existing
            continue
        graph_store_ensure(graph=graph)
        return graph
    raise Conflict("Could not pick a name for your default graph.", code="graph_name_taken")


def graph_counts_refresh(*, graph: Graph) -> None:
    """Copy the store's entity/relation/document counts onto the row (a full scan: repairs only;
    writes keep the counts with graph_counts_apply)."""
    counts = store.store_counts(graph.store_name)
    graph.entity_count = counts["entities"]
    graph.relation_count = counts["relations"]
    graph.document_count = counts["documents"]
    Graph.objects.filter(pk=graph.pk).update(
        entity_count=graph.entity_count, relation_count=graph.relation_count, document_count=graph.document_count
    )


def graph_counts_apply(*, graph: Graph, delta: GraphCounts | None) -> None:
    """Add a write's change of the entity/relation/document counts to the row (atomic F updates)."""
    if not delta or not any(delta.values()):
        return
    Graph.objects.filter(pk=graph.pk).update(
        entity_count=Greatest(F("entity_count") + delta["entities"], 0),
        relation_count=Greatest(F("relation_count") + delta["relations"], 0),
        document_count=Greatest(F("document_count") + delta["documents"], 0),
    )
    counts = Graph.objects.filter(pk=graph.pk).values("entity_count", "relation_count", "document_count").first()
    if counts is not None:
        graph.entity_count = counts["entity_count"]
        graph.relation_count = counts["relation_count"]
        graph.document_count = counts["document_count"]


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


def _entity_text(name: str, description: str) -> str:
    return f"{name}. {description}".strip() if description else name


# Entity vectors by (embedder, text): the same names recur across a user's documents ("United States" in
# thousands of passages), and a batch ingest embeds a whole group's entity texts in one call up front.
ENTITY_VECTOR_CACHE_SIZE = 50_000
_entity_vectors: OrderedDict[tuple[str, str], tuple[float, ...]] = OrderedDict()
_entity_vectors_lock = threading.Lock()


def _entity_vectors_embed(*, embedder: Any, texts: Sequence[str]) -> list[list[float]]:
    """Vectors for texts, from the bounded cache where it holds them, the rest embedded in one call."""
    name = str(getattr(embedder, "name", type(embedder).__name__))
    found: dict[str, tuple[float, ...]] = {}
    with _entity_vectors_lock:
        for text in texts:
            vector = _entity_vectors.get((name, text))
            if vector is not None:
                _entity_vectors.move_to_end((name, text))
                found[text] = vector
    missing = list(dict.fromkeys(t for t in texts if t not in found))
    if missing:
        for text, vector in zip(missing, embedder.embed(missing), strict=True):
            found[text] = tuple(float(x) for x in vector)
        with _entity_vectors_lock:
            for text in missing:
                _entity_vectors[(name, text)] = found[text]
            while len(_entity_vectors) > ENTITY_VECTOR_CACHE_SIZE:
                _entity_vectors.popitem(last=False)
    return [list(found[text]) for text in texts]


def entity_vectors_prepare(*, graph: Graph, names: Sequence[tuple[str, str]]) -> int:
    """Embed the (name, description) entity texts a coming graph_document_write will need, in one batch,
    into the cache it reads (the batch ingest calls this for a group of documents). Returns how many."""
    texts = list(dict.fromkeys(_entity_text(" ".join(n.split())[:300], d) for n, d in names if n.strip()))
    if texts:
        _entity_vectors_embed(embedder=embedder_check(graph=graph), texts=texts)
    return len(texts)


def _prepare(
    *,
    chunks: Sequence[ChunkIn],
    entities: Sequence[EntityIn],
    mentions: Sequence[MentionIn],
    relations: Sequence[RelationIn],
    dimension: int,
    embedder: Any,
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
        vectors = _entity_vectors_embed(
            embedder=embedder, texts=[_entity_text(row["name"], row["description"]) for row in missing]
        )
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
    chunk_rows, entity_rows, mention_rows, relation_rows = _prepare(
        chunks=chunks,
        entities=entities,
        mentions=mentions,
        relations=relations,
        dimension=int(graph.embedding_dim or embedder.dimension),
        embedder=embedder,
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


def graph_vectors_compact(*, graph: Graph) -> dict[str, int]:
    """Delete graph's orphan vector nodes (left by removed documents and changed texts) and rebuild
    its vector indexes; returns the nodes deleted per kind. Raises 503."""
    if not graph.embedding_dim:
        return {"entity_vectors": 0, "chunk_vectors": 0}
    removed = store.store_vectors_compact(graph.store_name, dimension=int(graph.embedding_dim))
    if any(removed.values()):
        logger.info(
            "graph %s compacted: %d entity and %d chunk vector nodes dropped",
            graph.id,
            removed["entity_vectors"],
            removed["chunk_vectors"],
        )
    return removed


def graph_vectors_compact_all() -> int:
    """Compact the vector nodes of every graph (the periodic job); a store that fails is logged and
    skipped. Returns the number of vector nodes deleted."""
    total = 0
    for graph in Graph.objects.order_by("created"):
        try:
            total += sum(graph_vectors_compact(graph=graph).values())
        except (ServiceUnavailable, redis.RedisError):
            logger.exception("vector compaction of graph %s failed", graph.id)
    return total


def entities_search(
    *, actor: User, query: str, n_results: int = 10, graph_id: str | None = None, scope: Scope
) -> list[EntityHit]:
    """Hybrid entity search (graphs.retrieval.entity_search) for actor; records the world knowledge of other
    accounts it returned with billing (which pays them after commit). Raises as entity_search."""
    found = entity_search(user=actor, query=query, n_results=n_results, graph_id=graph_id, scope=scope)
    earnings_record(
        querier=actor, query=query.strip(), contributor_ids=found["contributor_ids"], source=UsageSource.SEARCH
    )
    return found["hits"]


def world_entity_lookup(*, actor: User, entity: str, evidence: bool = False, limit: int = 25) -> WorldEntityView:
    """A World Graph entity and its relations (selectors.world_entity_read) for actor; records the
    contributors' knowledge it returned with billing. Raises as world_entity_read."""
    found = world_entity_read(user=actor, entity=entity, evidence=evidence, limit=limit)
    earnings_record(
        querier=actor,
        query=entity.strip(),
        contributor_ids=found["contributor_ids"],
        source=UsageSource.WORLD_ENTITY,
    )
    return found["view"]


def graph_reembed(*, graph: Graph, batch: int = 256) -> dict[str, int]:
    """Re-embed every chunk and entity of graph with the current embedder and record it on the row."""
    embedder = get_embedder()
    store.store_vectors_reset(graph.store_name)
    counts = {"chunks": 0, "entities": 0}
    after = ""
    while True:
        page = store.store_embedding_texts(graph.store_name, after=after, batch=batch)
        if not page:
            break
        vectors = embedder.embed([chunk_embedding_text(text, title=title) for _, text, title in page])
        rows = [
            {"id": node_id, "embedding": [float(x) for x in vector], "vkey": store.vector_key(node_id, vector)}
            for (node_id, _, _), vector in zip(page, vectors, strict=True)
        ]
        store.store_vectors_write(graph.store_name, "Chunk", rows)
        counts["chunks"] += len(rows)
        after = page[-1][0]
    after = ""
    while True:
        entities = store.store_entity_contributions(graph.store_name, after=after, batch=batch)
        if not entities:
            break
        # One vector per contributing document's text (the same text embeds once).
        texts = list(
            dict.fromkeys(
                _entity_text(name, description)
                for _, names, descriptions in entities
                for name, description in zip(names, descriptions, strict=True)
            )
        )
        keyed = {}
        for text, vector in zip(texts, embedder.embed(texts), strict=True):
            keyed[text] = [float(x) for x in vector]
        entity_rows = []
        for entity_id, names, descriptions in entities:
            own = {
                text: store.vector_key(entity_id, keyed[text])
                for text in (_entity_text(n, d) for n, d in zip(names, descriptions, strict=True))
            }
            entity_rows.append(
                {
                    "id": entity_id,
                    "vkeys": [own[_entity_text(n, d)] for n, d in zip(names, descriptions, strict=True)],
                    "vectors": [{"key": key, "embedding": keyed[text]} for text, key in own.items()],
                }
            )
        store.store_vectors_write(graph.store_name, "Entity", entity_rows)
        counts["entities"] += len(entity_rows)
        after = entities[-1][0]
    Graph.objects.filter(pk=graph.pk).update(embedding_model=embedder.name, embedding_dim=embedder.dimension)
    graph.embedding_model, graph.embedding_dim = embedder.name, embedder.dimension
    store.store_ensure(graph.store_name, dimension=embedder.dimension)
    return counts


__all__ = [
    "entities_search",
    "graph_counts_apply",
    "graph_counts_refresh",
    "graph_create",
    "graph_default_for_user",
    "graph_delete",
    "graph_document_remove",
    "graph_document_write",
    "graph_reembed",
    "graph_rename",
    "graph_store_ensure",
    "graph_vectors_compact",
    "graph_vectors_compact_all",
    "world_entity_lookup",
]
