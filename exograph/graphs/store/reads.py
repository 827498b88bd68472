"""Reads of the graph store (GRAPH.RO_QUERY): the hybrid-search lists, entities, relations, passages.

Retrieval's reads (BM25 passages, entity linking, the typed walk) are in retrieve.py, the export's pages in
export.py."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Sequence
from typing import Any

import redis

from exograph.graphs.store.core import ro_query

logger = logging.getLogger(__name__)

# Relation edges only run Entity -> Entity, but the walk also names the structural types it must never
# follow, so a future edge between entities of those types cannot leak into it.
STRUCTURAL = ["HAS_CHUNK", "MENTIONS"]


# --- search ------------------------------------------------------------------------------------


def store_search_text_lists(
    store_name: str, *, text_query: str, k: int, chunks: bool = True, entities: bool = True
) -> dict[str, list[tuple[str, float, str]]]:
    """Full-text lists of the hybrid search, as (entity id, score, passage) tuples, best first:
    entity_text (entities by name) and chunk_text (chunks, mapped to the entities
    they mention; the passage is the chunk text)."""
    lists: dict[str, list[tuple[str, float, str]]] = {}
    if not text_query:
        return lists
    if entities:
        lists["entity_text"] = [
            (entity_id, score, "") for entity_id, score in _entity_text_hits(store_name, text_query, k)
        ]
    if chunks:
        rows = ro_query(
            store_name,
            "CALL db.idx.fulltext.queryNodes('Chunk', $q) YIELD node, score "
            "WITH node, score ORDER BY score DESC LIMIT $k "
            "MATCH (node)-[:MENTIONS]->(e:Entity) WITH node, score, collect(e.id) AS eids "
            "RETURN eids, score, node.text ORDER BY score DESC",
            {"q": text_query, "k": k},
        )
        lists["chunk_text"] = _per_mention(rows)
    return lists


# Entities by name, full text. Names only (and their CJK bigrams in `terms`): a description's common words
# ("a model of ...") matched most entities, which cost the read its time and ranked noise; what a description means
# is searched by the entity vectors (name and description embedded together).
#
# The index hands every node a term matches to the query, which then sorts them: a word in 1 % of the names is
# 10,000 nodes at 1M entities, and reading them was most of a World Graph search's time, growing with the graph
# (issue 29: 27 ms p50 alone at 762k entities, of a search of about 38). So each term's matches are first counted
# up to COMMON_TERM (the count stops there); a query of rare terms only is asked as before, whole. A query with a
# common term asks for its rare terms, the pairs of its first PAIR_TERMS terms (an intersection the index walks
# by skipping, without handing over every node) and its terms as one phrase (the name spelled out ranks first);
# only when those give fewer than k names do the common terms' own matches fill the list, read up to COMMON_TERM.
COMMON_TERM = 512
PAIR_TERMS = 6
ENTITY_TEXT = (
    "CALL db.idx.fulltext.queryNodes('Entity', $q) YIELD node, score "
    "WITH node, score ORDER BY score DESC LIMIT $k RETURN node.id, score"
)
ENTITY_TEXT_CAPPED = (
    "CALL db.idx.fulltext.queryNodes('Entity', $q) YIELD node, score WITH node, score LIMIT $cap "
    "WITH node, score ORDER BY score DESC LIMIT $k RETURN node.id, score"
)


def _entity_text(store_name: str, query: str, k: int, *, cap: int | None = None) -> list[tuple[str, float]]:
    values: dict[str, Any] = {"q": f"@name|terms:({query})", "k": k}
    if cap is not None:
        values["cap"] = cap
    rows = ro_query(store_name, ENTITY_TEXT if cap is None else ENTITY_TEXT_CAPPED, values)
    return [(r[0], float(r[1])) for r in rows]


def _entity_term_counts(store_name: str, terms: list[str]) -> list[int]:
    """How many entity names each term matches, counted up to COMMON_TERM + 1 (one read; a term that matches
    nothing has no row)."""
    branches = [
        f"CALL db.idx.fulltext.queryNodes('Entity', $t{i}) YIELD node WITH node LIMIT $cap "
        f"RETURN {i} AS i, count(node) AS n"
        for i in range(len(terms))
    ]
    values: dict[str, Any] = {f"t{i}": f"@name|terms:({term})" for i, term in enumerate(terms)}
    rows = ro_query(store_name, " UNION ALL ".join(branches), {**values, "cap": COMMON_TERM + 1})
    counts = {int(r[0]): int(r[1] or 0) for r in rows}
    return [counts.get(i, 0) for i in range(len(terms))]


def _entity_text_hits(store_name: str, text_query: str, k: int) -> list[tuple[str, float]]:
    """(entity id, score) by full text over names, best first; see COMMON_TERM above."""
    terms = [t for t in dict.fromkeys(text_query.split("|")) if t]
    if not terms:
        return []
    counts = dict(zip(terms, _entity_term_counts(store_name, terms), strict=True))
    live = [t for t in terms if counts[t]]
    common = [t for t in live if counts[t] > COMMON_TERM]
    if not common:
        return _entity_text(store_name, "|".join(live), k) if live else []
    clauses = [t for t in live if counts[t] <= COMMON_TERM]
    clauses += [f"({a} {b})" for a, b in itertools.combinations(live[:PAIR_TERMS], 2)]
    if len(live) > 1 and not any('"' in t for t in live):
        clauses.append('"' + " ".join(live) + '"')
    hits = _entity_text(store_name, "|".join(clauses), k) if clauses else []
    if len(hits) < k:
        found = {entity_id for entity_id, _ in hits}
        more = _entity_text(store_name, "|".join(common), k + len(hits), cap=COMMON_TERM)
        hits += [(entity_id, score) for entity_id, score in more if entity_id not in found][: k - len(hits)]
    return hits


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
            "MATCH (c)-[:MENTIONS]->(e:Entity) WITH c, score, collect(e.id) AS eids "
            "RETURN eids, -score AS similarity, c.text ORDER BY similarity DESC",
            {"v": vector, "k": vector_k or k, "limit": k},
        )
        lists["chunk_vector"] = _per_mention(rows)
    return lists


def _per_mention(rows: list[list[Any]]) -> list[tuple[str, float, str]]:
    """(entity id, score, chunk text) per mention, best chunk first, from rows of (entity ids, score, text) per
    chunk (each chunk's text crosses the wire once, not once per entity it mentions)."""
    return [(eid, float(score), text or "") for eids, score, text in rows for eid in sorted(eids)]


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


# Alias lookups read the alias_keys array index: `key IN e.alias_keys` with the key first is an index
# scan (an any(...) filter over the array scans every entity: 60 ms at 100k entities, 0.2 ms indexed).
ALIAS_FIND = "MATCH (e:Entity) WHERE $key IN e.alias_keys RETURN e.id ORDER BY size(e.document_ids) DESC LIMIT 1"
ALIAS_HITS = (
    "UNWIND $keys AS key MATCH (e:Entity) WHERE key IN e.alias_keys "
    "RETURN DISTINCT e.id, size(e.document_ids) AS n ORDER BY n DESC LIMIT $limit"
)


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
    rows = ro_query(store_name, ALIAS_FIND, {"key": key})
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
        "UNWIND $ids AS cid MATCH (c:Chunk {id: cid}) WITH c MATCH (d:Document)-[:HAS_CHUNK]->(c) "
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
        "UNWIND $ids AS eid MATCH (e:Entity {id: eid}) WITH e MATCH (c:Chunk)-[:MENTIONS]->(e) "
        "WITH e.id AS id, collect(c.text)[0..$n] AS texts RETURN id, texts",
        {"ids": list(entity_ids), "n": per_entity},
    )
    return {r[0]: (r[1][0] if r[1] else "") for r in rows}


def store_chunk_places(store_name: str, chunk_ids: Sequence[str]) -> dict[str, tuple[str, int | None]]:
    """chunk id -> (document id, page); no text."""
    if not chunk_ids:
        return {}
    rows = ro_query(
        store_name,
        "UNWIND $ids AS cid MATCH (c:Chunk {id: cid}) RETURN c.id, c.document_id, c.page",
        {"ids": list(chunk_ids)},
    )
    return {r[0]: (r[1] or "", r[2]) for r in rows}
