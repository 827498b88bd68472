"""Reads of the graph store (GRAPH.RO_QUERY): the hybrid-search lists, entities, relations, passages."""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Sequence
from typing import Any

import redis

from exograph.graphs.store import cjk
from exograph.graphs.store.core import ro_query

logger = logging.getLogger(__name__)

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
        rows = ro_query(
            store_name,
            # Names only (and their CJK bigrams in `terms`): a description's common words ("a model of ...")
            # matched most entities, which cost the read its time and ranked noise; what a description means is
            # searched by the entity vectors (name and description embedded together). The top k before reading
            # a property: a common word still matches thousands of names.
            "CALL db.idx.fulltext.queryNodes('Entity', $q) YIELD node, score "
            "WITH node, score ORDER BY score DESC LIMIT $k RETURN node.id, score",
            {"q": f"@name|terms:({text_query})", "k": k},
        )
        lists["entity_text"] = [(r[0], float(r[1]), "") for r in rows]
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


# --- retrieval (graphs/retrieval/): passages directly, entity linking, typed walk, PPR subgraph --

# Relation edges only run Entity -> Entity, but the walk also names the structural types it must never
# follow, so a future edge between entities of those types cannot leak into it.
_STRUCTURAL = ["HAS_CHUNK", "MENTIONS"]


BM25_K1 = 1.2
BM25_B = 0.75
TEXT_CANDIDATES = 300  # chunks rescored per query, drawn from the rarest query terms first
TERM_POSTINGS = 400  # chunk ids read per query term


def _stem(word: str) -> str:
    """A light English suffix strip, so "rangers"/"ranger" and "founded"/"found" count as one term."""
    for suffix in ("'s", "ings", "ing", "edly", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def store_chunk_text_hits(store_name: str, *, text_query: str, k: int) -> list[tuple[str, float]]:
    """Chunks by full text, directly (no MENTIONS join: a chunk that names no entity is found), ranked by
    BM25: (chunk id, score). The index finds each term's chunks (and how many there are); the rarest
    terms' chunks are rescored here, because the index's own scorer hardly weighs how rare a word is
    (a passage repeating "Texas" beat the one naming the film the question asks about)."""
    terms = [t for t in dict.fromkeys(text_query.split("|")) if t]
    if not terms:
        return []
    rows = ro_query(
        store_name,
        "UNWIND $terms AS t CALL db.idx.fulltext.queryNodes('Chunk', t) YIELD node "
        "WITH t, collect(node.id) AS ids RETURN t, size(ids), ids[0..$cap]",
        {"terms": terms, "cap": TERM_POSTINGS},
    )
    postings = {r[0]: (int(r[1] or 0), list(r[2] or [])) for r in rows}
    if not postings:
        return []
    total = ro_query(store_name, "MATCH (c:Chunk) RETURN count(c)", {})
    n_chunks = max(1, int(total[0][0] or 0)) if total else 1
    candidates: list[str] = []
    for term in sorted(postings, key=lambda t: postings[t][0]):
        candidates.extend(c for c in postings[term][1] if c not in candidates)
        if len(candidates) >= TEXT_CANDIDATES:
            break
    texts = ro_query(
        store_name,
        "UNWIND $ids AS cid MATCH (c:Chunk {id: cid}) RETURN c.id, c.text",
        {"ids": candidates[: TEXT_CANDIDATES * 2]},
    )
    idf = {_stem(t): math.log(1.0 + (n_chunks - df + 0.5) / (df + 0.5)) for t, (df, _) in postings.items() if df > 0}
    docs = [(r[0], _bm25_words(r[1] or "")) for r in texts]
    average = sum(len(words) for _, words in docs) / max(1, len(docs)) or 1.0
    scored: list[tuple[str, float]] = []
    for chunk_id, words in docs:
        counts: dict[str, int] = {}
        for word in words:
            if word in idf:
                counts[word] = counts.get(word, 0) + 1
        norm = BM25_K1 * (1 - BM25_B + BM25_B * len(words) / average)
        score = sum(idf[t] * tf * (BM25_K1 + 1) / (tf + norm) for t, tf in counts.items())
        if score > 0:
            scored.append((chunk_id, score))
    scored.sort(key=lambda row: (-row[1], row[0]))
    return scored[:k]


_WORD = re.compile(r"[^\W_]+")


def _bm25_words(text: str) -> list[str]:
    """The text's stemmed words, plus the bigrams of its CJK runs (a query's CJK terms are bigrams: see
    store/cjk.py, since CJK has no spaces to split words by)."""
    words: list[str] = []
    for word in _WORD.findall(text.casefold()):
        words.append(_stem(word))
        if cjk.has_cjk(word):
            for run in cjk.cjk_runs(word):
                words.extend(cjk.bigrams(run))
    return words


def store_chunk_vector_hits(
    store_name: str, *, vector: list[float], k: int, vector_k: int | None = None
) -> list[tuple[str, float]]:
    """Chunks by vector, directly: (chunk id, cosine similarity), best first; dormant vectors skipped."""
    rows = ro_query(
        store_name,
        "CALL db.idx.vector.queryNodes('ChunkVector', 'embedding', $vk, vecf32($v)) YIELD node, score "
        "MATCH (c:Chunk {id: node.chunk_id}) WHERE c.vkey = node.key "
        "RETURN c.id, score ORDER BY score ASC LIMIT $k",
        {"v": vector, "vk": vector_k or k, "k": k},
    )
    return [(r[0], 1.0 - float(r[1])) for r in rows]


def store_entity_key_hits(store_name: str, *, keys: Sequence[str], limit: int) -> list[str]:
    """Entities whose normalised name (indexed) or alias key is one of keys, best supported first."""
    if not keys:
        return []
    rows = ro_query(
        store_name,
        "UNWIND $keys AS key MATCH (e:Entity {normalized_name: key}) "
        "RETURN DISTINCT e.id, size(e.document_ids) AS n ORDER BY n DESC LIMIT $limit",
        {"keys": list(keys), "limit": limit},
    )
    found = [r[0] for r in rows]
    rows = ro_query(store_name, ALIAS_HITS, {"keys": list(keys), "limit": limit})
    found += [r[0] for r in rows if r[0] not in found]
    return found[:limit]


def store_chunks(store_name: str, chunk_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Chunk text, page and provenance (document id, file name, title, source URL, contributor) by chunk id."""
    if not chunk_ids:
        return {}
    rows = ro_query(
        store_name,
        "UNWIND $ids AS cid MATCH (c:Chunk {id: cid}) OPTIONAL MATCH (d:Document {id: c.document_id}) "
        "RETURN c.id, c.text, c.page, c.document_id, d.filename, d.title, d.source_url, d.contributor",
        {"ids": list(chunk_ids)},
    )
    return {
        r[0]: {
            "text": r[1] or "",
            "page": r[2],
            "document_id": r[3],
            "filename": r[4] or "",
            "title": r[5] or "",
            "url": r[6] or None,
            "contributor": r[7],
        }
        for r in rows
    }


# Every multi-id read below anchors on the indexed id first (MATCH (n {id}) WITH n MATCH (n)-[...]):
# written as one pattern, FalkorDB's planner may start from the other end's label scan instead — for the
# walk that was every Entity per frontier id, and 10 s timeouts on a 1,000-passage graph.


def store_walk_hop(
    store_name: str, *, frontier: Sequence[str], hits: Sequence[str], visited: Sequence[str], limit: int
) -> list[dict[str, Any]]:
    """One hop of the Retrieve walk over TYPED relation edges from the frontier to entities not yet
    expanded already (their edges were considered): relations that end on another hit first (paths between hits),
    then the strongest; at most limit."""
    if not frontier or limit <= 0:
        return []
    rows = ro_query(
        store_name,
        "UNWIND $ids AS eid MATCH (a:Entity {id: eid}) WITH a MATCH (a)-[r]-(b:Entity) "
        "WHERE NOT type(r) IN $structural AND NOT b.id IN $visited "
        # an edge between two frontier entities is matched from both ends: one row per edge
        "WITH r, max(CASE WHEN b.id IN $hits THEN 1 ELSE 0 END) AS between, collect(b.id)[0] AS reached "
        "RETURN startNode(r).id, startNode(r).name, type(r), endNode(r).id, endNode(r).name, reached, "
        "r.count, r.chunk_ids, r.document_ids, r.contributors "
        "ORDER BY between DESC, r.count DESC, reached ASC LIMIT $limit",
        {
            "ids": list(frontier),
            "hits": list(hits),
            "visited": list(visited),
            "structural": _STRUCTURAL,
            "limit": limit,
        },
    )
    return [_relation_row(r) for r in rows]


def _relation_row(r: list[Any]) -> dict[str, Any]:
    return {
        "source_id": r[0],
        "source": r[1] or "",
        "type": r[2],
        "target_id": r[3],
        "target": r[4] or "",
        "reached": r[5],
        "strength": int(r[6] or 0),
        "chunk_ids": list(r[7] or []),
        "document_ids": list(r[8] or []),
        "contributors": list(r[9] or []),
    }


def store_relations_among(store_name: str, *, ids: Sequence[str], limit: int) -> list[dict[str, Any]]:
    """The typed relations whose two ends are both among ids (the strongest first, at most limit), in
    store_walk_hop's row shape."""
    if not ids:
        return []
    rows = ro_query(
        store_name,
        # Every ordered pair of the given entities, matched end to end: a hub's thousands of other edges are never
        # expanded (7x faster at 40 ids than walking each one's edges and filtering the far end).
        "UNWIND $ids AS eid MATCH (n:Entity {id: eid}) WITH collect(n) AS ns "
        "UNWIND ns AS a UNWIND ns AS b WITH a, b MATCH (a)-[r]->(b) WHERE NOT type(r) IN $structural "
        "RETURN a.id, a.name, type(r), b.id, b.name, b.id AS reached, r.count, r.chunk_ids, r.document_ids, r.contributors "
        "ORDER BY r.count DESC, a.id, b.id LIMIT $limit",
        {"ids": list(ids), "structural": _STRUCTURAL, "limit": limit},
    )
    return [_relation_row(r) for r in rows]


def store_chunk_mention_names(store_name: str, *, chunk_ids: Sequence[str]) -> list[tuple[str, str]]:
    """(chunk id, normalised name) of every entity the given chunks mention (one pair per name, whatever the types)."""
    if not chunk_ids:
        return []
    rows = ro_query(
        store_name,
        "UNWIND $ids AS cid MATCH (c:Chunk {id: cid}) WITH c MATCH (c)-[:MENTIONS]->(e:Entity) "
        "RETURN DISTINCT c.id, e.normalized_name",
        {"ids": list(chunk_ids)},
    )
    return [(r[0], r[1]) for r in rows if r[1]]


def store_name_chunks(
    store_name: str, *, keys: Sequence[str], per_name: int
) -> dict[str, tuple[list[str], int, list[str]]]:
    """Per normalised name that some entity has (of any type: "Paris" the city and "Paris" the concept are one
    name): up to per_name ids of chunks that mention it, how many chunks mention it in all, and the entity ids.
    Names no entity has are absent."""
    if not keys:
        return {}
    rows = ro_query(
        store_name,
        "UNWIND $keys AS key MATCH (e:Entity {normalized_name: key}) WITH key, e "
        "MATCH (c:Chunk)-[:MENTIONS]->(e) WITH key, collect(DISTINCT e.id) AS eids, collect(DISTINCT c.id) AS cids "
        "RETURN key, cids[0..$n], size(cids), eids",
        {"keys": list(dict.fromkeys(keys)), "n": per_name},
    )
    return {r[0]: (list(r[1] or []), int(r[2] or 0), list(r[3] or [])) for r in rows}


def store_chunk_titles(store_name: str, chunk_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
    """chunk id -> (document id, the document's title; "" for an untitled upload)."""
    if not chunk_ids:
        return {}
    rows = ro_query(
        store_name,
        "UNWIND $ids AS cid MATCH (c:Chunk {id: cid}) OPTIONAL MATCH (d:Document {id: c.document_id}) "
        "RETURN c.id, c.document_id, d.title",
        {"ids": list(chunk_ids)},
    )
    return {r[0]: (r[1] or "", r[2] or "") for r in rows}


def store_alias_names(store_name: str, *, keys: Sequence[str], limit: int, per_key: int) -> dict[str, list[str]]:
    """alias key -> the normalised names (other than the key) of the entities that have it as an alias, best
    supported first, at most per_key of them (indexed); at most limit keys."""
    if not keys:
        return {}
    rows = ro_query(
        store_name,
        "UNWIND $keys AS key MATCH (e:Entity) WHERE key IN e.alias_keys AND e.normalized_name <> key "
        "WITH key, e ORDER BY size(e.document_ids) DESC, e.normalized_name "
        "WITH key, collect(DISTINCT e.normalized_name)[0..$per_key] AS names RETURN key, names LIMIT $limit",
        {"keys": list(keys), "limit": limit, "per_key": per_key},
    )
    return {r[0]: [n for n in r[1] or [] if n] for r in rows if r[1]}


def store_entity_degrees(store_name: str, ids: Sequence[str]) -> dict[str, int]:
    """How many relations each entity has with other entities (the explorer's node size and "N more")."""
    if not ids:
        return {}
    rows = ro_query(
        store_name,
        "UNWIND $ids AS eid MATCH (e:Entity {id: eid}) OPTIONAL MATCH (e)-[r]-(o:Entity) WHERE o <> e "
        "RETURN eid, count(r)",
        {"ids": list(ids)},
    )
    return {r[0]: int(r[1] or 0) for r in rows}


# --- export (graphs/export.py): pages in id order, never the whole graph ---------------------------
# Each page reads the nodes after the last id of the previous one (`after`), so memory is one page. With a
# contributor, only that account's share is read: its documents, its entries of an entity's per-document lists,
# the relations it supports (the World Graph's export of one account's contributions).


def store_export_documents(store_name: str, *, after: str, limit: int, contributor: int | None) -> list[dict[str, Any]]:
    """Documents after the id `after` in id order (at most limit): id, filename, title, source_url."""
    rows = ro_query(
        store_name,
        "MATCH (d:Document) WHERE d.id > $after AND ($c IS NULL OR d.contributor = $c) "
        "RETURN d.id, d.filename, d.title, d.source_url ORDER BY d.id LIMIT $limit",
        {"after": after, "limit": limit, "c": contributor},
    )
    return [{"id": r[0], "filename": r[1] or "", "title": r[2] or "", "source_url": r[3] or ""} for r in rows]


def store_export_document_chunks(store_name: str, document_id: str) -> list[dict[str, Any]]:
    """One document's chunks in reading order: chunk_id, page, text (no vectors)."""
    rows = ro_query(
        store_name,
        "MATCH (d:Document {id: $doc}) WITH d MATCH (d)-[:HAS_CHUNK]->(c:Chunk) "
        "RETURN c.id, c.page, c.text ORDER BY c.ordinal, c.id",
        {"doc": document_id},
    )
    return [{"chunk_id": r[0], "page": r[1], "text": r[2] or ""} for r in rows]


def store_export_entities(store_name: str, *, after: str, limit: int, contributor: int | None) -> list[dict[str, Any]]:
    """Entities after the id `after` in id order (at most limit): id, type, name, description, aliases,
    document_ids; with a contributor, the name, description and aliases its own documents gave."""
    mine = "AND $c IN e.doc_contributors " if contributor is not None else ""
    rows = ro_query(
        store_name,
        # Only plain properties: the per-document lists are picked apart here (list comprehensions in the query cost
        # several times the read).
        f"MATCH (e:Entity) WHERE e.id > $after {mine}WITH e ORDER BY e.id LIMIT $limit "
        "RETURN e.id, e.type, e.name, e.description, e.aliases, e.document_ids"
        + (", e.doc_contributors, e.doc_names, e.doc_descriptions, e.doc_aliases" if contributor is not None else ""),
        {"after": after, "limit": limit, **({"c": contributor} if contributor is not None else {})},
    )
    out = []
    for row in rows:
        eid, kind, name, description, aliases, docs = row[:6]
        if contributor is not None:
            contributors, names, descriptions, alias_lists = (list(v or []) for v in row[6:10])
            picked = [i for i, c in enumerate(contributors) if c == contributor]
            given = [names[i] for i in picked if i < len(names) and names[i]]
            name = given[0] if given else name
            description = max((descriptions[i] or "" for i in picked if i < len(descriptions)), key=len, default="")
            merged = [a for i in picked if i < len(alias_lists) for a in alias_lists[i] or []]
            aliases = [a for a in dict.fromkeys(merged) if a != name]
            docs = [docs[i] for i in picked if i < len(docs or [])]
        out.append(
            {
                "id": eid,
                "type": kind or "",
                "name": name or "",
                "description": description or "",
                "aliases": list(aliases or []),
                "document_ids": list(docs or []),
            }
        )
    return out


def store_export_relations(
    store_name: str, *, after: str, limit: int, contributor: int | None
) -> tuple[list[dict[str, Any]], str | None]:
    """The typed relations leaving the (at most limit) entities after the id `after`, and the last entity id read
    (the next cursor; None when no entity is left): source, target, type, strength, document_ids, chunk_ids.
    With a contributor, only the relations it supports, with its documents and its strength."""
    ids = ro_query(
        store_name,
        "MATCH (e:Entity) WHERE e.id > $after RETURN e.id ORDER BY e.id LIMIT $limit",
        {"after": after, "limit": limit},
    )
    if not ids:
        return [], None
    mine = "AND $c IN r.doc_contributors " if contributor is not None else ""
    rows = ro_query(
        store_name,
        "UNWIND $ids AS eid MATCH (a:Entity {id: eid}) WITH a MATCH (a)-[r]->(b:Entity) "
        f"WHERE NOT type(r) IN $structural {mine}"
        "RETURN a.id, b.id, type(r), r.count, r.document_ids, r.chunk_ids"
        # Arrays cost their parsing: the per-document lists only when they are needed.
        + (", r.doc_contributors, r.weights" if contributor is not None else ""),
        {
            "ids": [r[0] for r in ids],
            "structural": _STRUCTURAL,
            **({"c": contributor} if contributor is not None else {}),
        },
    )
    out = []
    for row in rows:
        source, target, kind, count, docs, chunk_ids = row[:6]
        docs, strength = list(docs or []), int(count or 0)
        if contributor is not None:
            contributors, weights = list(row[6] or []), list(row[7] or [])
            picked = [i for i, c in enumerate(contributors) if c == contributor]
            strength = sum(int(weights[i] or 0) if i < len(weights) else 1 for i in picked)
            docs = [docs[i] for i in picked if i < len(docs)]
        out.append(
            {
                "source": source,
                "target": target,
                "type": kind,
                "strength": strength,
                "document_ids": docs,
                "chunk_ids": list(chunk_ids or []),
            }
        )
    out.sort(key=lambda r: (r["source"], r["type"], r["target"]))
    return out, str(ids[-1][0])


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
