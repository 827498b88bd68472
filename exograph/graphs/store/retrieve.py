"""Retrieval's reads of the graph store (graphs/retrieval/): passages directly (BM25 over the term postings and
vectors), entity linking, the typed walk, the PPR subgraph."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Sequence
from typing import Any

from exograph.graphs.store import cjk
from exograph.graphs.store.core import DEFAULT_RELATION, ro_query
from exograph.graphs.store.reads import ALIAS_HITS, STRUCTURAL, _vector_query

# --- retrieval (graphs/retrieval/): passages directly, entity linking, typed walk, PPR subgraph --


BM25_K1 = 1.2
BM25_B = 0.75
TEXT_CANDIDATES = 300  # chunks rescored per query, drawn from the rarest query terms first
TERM_POSTINGS = 400  # chunk ids read per query term


@functools.lru_cache(maxsize=65_536)  # a pure function of the word; a query stems the words of ~200 passages
def _stem(word: str) -> str:
    """A light English suffix strip, so "rangers"/"ranger" and "founded"/"found" count as one term."""
    for suffix in ("'s", "ings", "ing", "edly", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def store_chunk_text_hits(
    store_name: str,
    *,
    text_query: str,
    k: int,
    chunk_words: Callable[[Sequence[str]], dict[str, tuple[str, ...]]] | None = None,
) -> list[tuple[str, float]]:
    """store_chunk_text_scored's hits alone."""
    return store_chunk_text_scored(store_name, text_query=text_query, k=k, chunk_words=chunk_words)[0]


def store_chunk_text_scored(
    store_name: str,
    *,
    text_query: str,
    k: int,
    chunk_words: Callable[[Sequence[str]], dict[str, tuple[str, ...]]] | None = None,
) -> tuple[list[tuple[str, float]], dict[str, float]]:
    """(hits, idf): chunks by full text, directly (no MENTIONS join: a chunk that names no entity is found), ranked by
    BM25: (chunk id, score). The index finds each term's chunks (and how many there are); the rarest
    terms' chunks are rescored here, because the index's own scorer hardly weighs how rare a word is
    (a passage repeating "Texas" beat the one naming the film the question asks about). chunk_words: where the
    caller already holds the chunks' words (graph mode's in-memory index, bm25_words of each text, stemmed when it
    loads), chunk ids -> words instead of a read of their texts. idf: each stemmed query term the index finds -> its
    BM25 inverse document frequency (graph mode weighs the question's words by it: graph_mode.covering_order)."""
    terms = [t for t in dict.fromkeys(text_query.split("|")) if t]
    if not terms:
        return [], {}
    rows = ro_query(
        store_name,
        "UNWIND $terms AS t CALL db.idx.fulltext.queryNodes('Chunk', t) YIELD node "
        "WITH t, collect(node.id) AS ids RETURN t, size(ids), ids[0..$cap]",
        {"terms": terms, "cap": TERM_POSTINGS},
    )
    postings = {r[0]: (int(r[1] or 0), list(r[2] or [])) for r in rows}
    if not postings:
        return [], {}
    total = ro_query(store_name, "MATCH (c:Chunk) RETURN count(c)", {})
    n_chunks = max(1, int(total[0][0] or 0)) if total else 1
    candidates: list[str] = []
    for term in sorted(postings, key=lambda t: postings[t][0]):
        candidates.extend(c for c in postings[term][1] if c not in candidates)
        if len(candidates) >= TEXT_CANDIDATES:
            break
    if chunk_words is not None:
        docs = list(chunk_words(candidates[: TEXT_CANDIDATES * 2]).items())
    else:
        docs = [
            (r[0], _bm25_words(r[1] or ""))
            for r in ro_query(
                store_name,
                "UNWIND $ids AS cid MATCH (c:Chunk {id: cid}) RETURN c.id, c.text",
                {"ids": candidates[: TEXT_CANDIDATES * 2]},
            )
        ]
    idf = {_stem(t): math.log(1.0 + (n_chunks - df + 0.5) / (df + 0.5)) for t, (df, _) in postings.items() if df > 0}
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
    return scored[:k], idf


_WORD = re.compile(r"[^\W_]+")


def store_chunk_phrase_counts(store_name: str, keys: Sequence[str], *, cap: int) -> dict[str, int]:
    """How many chunks write each key (its words as one phrase, by the chunk full-text index), each counted up to
    cap (one read). A key the index finds nowhere (no word left, or only function words) counts 0."""
    phrases: dict[str, str] = {}
    for key in dict.fromkeys(keys):
        words = _WORD.findall(key.casefold())
        if words:
            phrases[key] = '"' + " ".join(words) + '"' if len(words) > 1 else words[0]
    if not phrases:
        return {}
    order = list(phrases)
    branches = [
        f"CALL db.idx.fulltext.queryNodes('Chunk', $t{i}) YIELD node WITH node LIMIT $cap "
        f"RETURN {i} AS i, count(node) AS n"
        for i in range(len(order))
    ]
    values: dict[str, Any] = {f"t{i}": phrases[key] for i, key in enumerate(order)}
    rows = ro_query(store_name, " UNION ALL ".join(branches), {**values, "cap": cap})
    counts = {int(r[0]): int(r[1] or 0) for r in rows}
    return {key: counts.get(i, 0) for i, key in enumerate(order)}


def bm25_words(text: str) -> tuple[str, ...]:
    """The text's stemmed words, plus the bigrams of its CJK runs (a query's CJK terms are bigrams: see
    store/cjk.py, since CJK has no spaces to split words by)."""
    folded = text.casefold()
    if folded.isascii() or not cjk.has_cjk(folded):  # most text: one check for CJK instead of one per word
        return tuple(map(_stem, _WORD.findall(folded)))
    words: list[str] = []
    for word in _WORD.findall(folded):
        words.append(_stem(word))
        if cjk.has_cjk(word):
            for run in cjk.cjk_runs(word):
                words.extend(cjk.bigrams(run))
    return tuple(words)


# A query rescores ~200 passages, mostly seen before (graph mode's in-memory index holds its own: subgraph_index.py).
_bm25_words = functools.lru_cache(maxsize=4_096)(bm25_words)


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
            "structural": STRUCTURAL,
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
        {"ids": list(ids), "structural": STRUCTURAL, "limit": limit},
    )
    return [_relation_row(r) for r in rows]


def store_chunk_facts(
    store_name: str, *, chunk_ids: Sequence[str], limit: int, typed: bool = False
) -> list[tuple[str, str, str, str, str]]:
    """The typed relations between two entities that one of the given chunks mentions, the chunks taken in order,
    each relation once, at most limit: (subject key, subject name, relation type, object name, object key), keys
    normalised names; typed: not the plain co-occurrence links (DEFAULT_RELATION). Matched end to end per chunk: a
    hub's other edges are never expanded."""
    if not chunk_ids or limit <= 0:
        return []
    rows = ro_query(
        store_name,
        "UNWIND $chunks AS p WITH p[0] AS at, p[1] AS cid MATCH (c:Chunk {id: cid})-[:MENTIONS]->(e:Entity) "
        "WITH at, collect(e) AS ns UNWIND ns AS a UNWIND ns AS b WITH at, a, b WHERE a <> b MATCH (a)-[r]->(b) "
        "WHERE NOT type(r) IN $structural AND NOT type(r) IN $skip WITH a, r, b, min(at) AS first "
        "RETURN a.normalized_name, a.name, type(r), b.name, b.normalized_name "
        "ORDER BY first, r.count DESC, a.normalized_name, b.normalized_name LIMIT $limit",
        {
            "chunks": [[i, cid] for i, cid in enumerate(chunk_ids)],
            "structural": STRUCTURAL,
            "skip": [DEFAULT_RELATION] if typed else [],
            "limit": limit,
        },
    )
    return [(r[0] or "", r[1] or "", r[2] or "", r[3] or "", r[4] or "") for r in rows if r[0] and r[4]]


def store_entity_neighbours(store_name: str, *, ids: Sequence[str], k: int) -> list[tuple[str, str, float]]:
    """(entity id, normalised name of another entity, cosine) for the k entity vectors nearest each given entity's
    current vectors (a vector of a document the other entity no longer has does not count)."""
    if not ids or k <= 0:
        return []
    rows = _vector_query(
        store_name,
        "UNWIND $ids AS eid MATCH (e:Entity {id: eid}) UNWIND coalesce(e.doc_vkeys, [e.id]) AS vkey "
        "MATCH (v:EntityVector {key: vkey}) "
        "CALL db.idx.vector.queryNodes('EntityVector', 'embedding', $k, v.embedding) YIELD node, score "
        "MATCH (o:Entity {id: node.entity_id}) WHERE o.id <> eid AND node.key IN coalesce(o.doc_vkeys, [o.id]) "
        "RETURN eid, o.normalized_name, min(score)",
        {"ids": list(ids), "k": k + 1},
    )
    return [(r[0], r[1] or "", 1.0 - float(r[2])) for r in rows]


def store_entity_vectors(store_name: str, ids: Sequence[str]) -> dict[str, list[float]]:
    """entity id -> one current vector of it (its first document's name and description); entities without one
    are absent."""
    if not ids:
        return {}
    rows = ro_query(
        store_name,
        "UNWIND $ids AS eid MATCH (e:Entity {id: eid}) WITH eid, head(coalesce(e.doc_vkeys, [e.id])) AS vkey "
        "MATCH (v:EntityVector {key: vkey}) RETURN eid, v.embedding",
        {"ids": list(dict.fromkeys(ids))},
    )
    return {r[0]: [float(x) for x in r[1]] for r in rows if r[1] is not None}


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
