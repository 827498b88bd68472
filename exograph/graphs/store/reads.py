"""Reads of the graph store (GRAPH.RO_QUERY): the hybrid-search lists, entities, relations, passages."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import redis

from exograph.graphs.store.core import ro_query

logger = logging.getLogger(__name__)

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
        # An entity has one vector per contributing document; only those of its current documents count.
        rows = _vector_query(
            store_name,
            "CALL db.idx.vector.queryNodes('EntityVector', 'embedding', $k, vecf32($v)) YIELD node, score "
            "MATCH (e:Entity {id: node.entity_id}) WHERE node.key IN coalesce(e.doc_vkeys, [e.id]) "
            "WITH e, min(score) AS score RETURN e.id, score ORDER BY score ASC LIMIT $limit",
            {"v": vector, "k": vector_k or k, "limit": k},
        )
        lists["entity_vector"] = [(r[0], -float(r[1]), "") for r in rows]
    if chunks:
        rows = _vector_query(
            store_name,
            "CALL db.idx.vector.queryNodes('ChunkVector', 'embedding', $k, vecf32($v)) YIELD node, score "
            "MATCH (c:Chunk {id: node.chunk_id}) WHERE c.vkey = node.key "
            "WITH c, score ORDER BY score ASC LIMIT $limit "
            "MATCH (c)-[:MENTIONS]->(e:Entity) RETURN e.id, score, c.text ORDER BY score ASC",
            {"v": vector, "k": vector_k or k, "limit": k},
        )
        lists["chunk_vector"] = [(r[0], -float(r[1]), r[2] or "") for r in rows]
    return lists


def _vector_query(store_name: str, cypher: str, values: dict[str, Any]) -> list[list[Any]]:
    """A KNN read; while store_vectors_compact rebuilds the index it has no answer, so none (logged)."""
    try:
        return ro_query(store_name, cypher, values)
    except redis.ResponseError as exc:
        if "db.idx.vector.queryNodes" not in str(exc):
            raise
        logger.info("vector index of %s is being rebuilt; vector list skipped", store_name)
        return []


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
