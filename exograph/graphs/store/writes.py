"""Writes of the graph store: one document's knowledge in UNWIND batches, its removal, re-embedding."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

import redis

from exograph.core.errors import ServiceUnavailable
from exograph.core.falkor import falkordb_client, replicas_catch_up, server_of_key
from exograph.graphs.store.cjk import cjk_terms
from exograph.graphs.store.core import (
    MAX_RELATION_CHUNK_IDS,
    STORE_DOWN,
    _batches,
    _ensured,
    _ensured_lock,
    label,
    query,
    relation_type,
    vector_index_create,
)
from exograph.graphs.store.core import (
    ro_query_primary as ro_query,  # every read here feeds a write: the primary's state, never a replica's
)
from exograph.graphs.store.revision import store_revision_bump, store_revision_once
from exograph.graphs.store.vectors import vector32
from exograph.graphs.types import GraphCounts

logger = logging.getLogger(__name__)


# --- document write / remove -------------------------------------------------------------------


# An entity keeps one entry per contributing document in parallel lists (document_ids,
# doc_contributors, doc_names, doc_descriptions, doc_aliases, doc_alias_keys, doc_vkeys); what is
# served (name, description, aliases, alias_keys, contributors) is recomputed from them on every
# write and removal, so a removed document's text leaves with it. Entities written before these
# lists existed get them on first touch, with their merged text standing for every old document.
_LEGACY_LISTS = (
    "WITH {keep}e, size(e.document_ids) AS n "
    "WITH {keep}e, n, "
    "coalesce(e.doc_names, [i IN range(1, n) | e.name]) AS names0, "
    "coalesce(e.doc_descriptions, [i IN range(1, n) | coalesce(e.description, '')]) AS descs0, "
    "coalesce(e.doc_aliases, [i IN range(1, n) | coalesce(e.aliases, [])]) AS aliases0, "
    "coalesce(e.doc_alias_keys, [i IN range(1, n) | coalesce(e.alias_keys, [])]) AS akeys0, "
    "coalesce(e.doc_vkeys, [i IN range(1, n) | e.id]) AS vkeys0 "
)
# Longest description wins (the earliest of equals), the first document's name is the name, the
# other names and every alias are the aliases.
_ENTITY_SET = (
    "SET e.document_ids = docs, e.doc_contributors = dc, e.doc_names = names, e.doc_descriptions = descs, "
    "e.doc_aliases = aliases, e.doc_alias_keys = akeys, e.doc_vkeys = vkeys, "
    "e.contributors = reduce(acc = [], c IN dc | CASE WHEN c IN acc THEN acc ELSE acc + [c] END), "
    "e.name = coalesce(names[0], e.name), "
    "e.description = coalesce(descs[reduce(b = 0, i IN range(0, size(descs) - 1) | "
    "CASE WHEN size(descs[i]) > size(descs[b]) THEN i ELSE b END)], ''), "
    "e.aliases = [a IN reduce(acc = [], l IN aliases | acc + [x IN l WHERE NOT x IN acc]) WHERE a <> names[0]], "
    "e.alias_keys = reduce(acc = [], l IN akeys | acc + [x IN l WHERE NOT x IN acc]) "
)


def _entity_terms_refresh(store_name: str, entity_ids: Sequence[str]) -> None:
    """Set `terms` (CJK bigrams of name and description, store/cjk.py) on the entities whose served
    text the last query recomputed; only changed values are written."""
    rows = ro_query(
        store_name,
        "UNWIND $eids AS eid MATCH (e:Entity {id: eid}) RETURN e.id, e.name, e.description, e.terms",
        {"eids": list(entity_ids)},
    )
    _entity_terms_write(store_name, rows)


def _entity_terms_write(store_name: str, rows: Sequence[Sequence[Any]]) -> None:
    """Set `terms` from rows (id, name, description, terms) of entities as a query just left them."""
    changed = [
        {"id": eid, "terms": terms}
        for eid, name, description, old in rows
        if (terms := cjk_terms(name or "", description or "")) != (old or "")
    ]
    if changed:
        query(store_name, "UNWIND $rows AS r MATCH (e:Entity {id: r.id}) SET e.terms = r.terms", {"rows": changed})


def _count(rows: list[list[Any]]) -> int:
    return int(rows[0][0] or 0) if rows else 0


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
    provenance: Mapping[str, str] | None = None,
) -> GraphCounts:
    """Write one document's knowledge (replacing what it wrote before), in UNWIND batches; returns
    the change of the entity, relation and document counts. provenance: the source's title, source_url,
    source_type and published (ISO date), kept on the Document node (retrieval cites title and URL).

    chunks: {id, text, page, ordinal, vkey, embedding, language, nonlanguage (core.language)}; entities: {id,
    name, key, alias_keys, type, description, aliases, vkey, embedding}; mentions: {chunk_id, entity_id}; relations by normalised
    type: {source, target, weight, chunk_ids}.
    """
    with store_revision_once(store_name):  # a dozen queries, one revision bump (store/revision.py)
        return _document_write(
            store_name,
            document_id=document_id,
            filename=filename,
            contributor_id=contributor_id,
            chunks=chunks,
            entities=entities,
            mentions=mentions,
            relations=relations,
            provenance=provenance,
        )


def _document_write(
    store_name: str,
    *,
    document_id: str,
    filename: str,
    contributor_id: int,
    chunks: Sequence[dict[str, Any]],
    entities: Sequence[dict[str, Any]],
    mentions: Sequence[dict[str, Any]],
    relations: Mapping[str, Sequence[dict[str, Any]]],
    provenance: Mapping[str, str] | None,
) -> GraphCounts:
    delta = store_document_remove(store_name, document_id=document_id) or GraphCounts(
        entities=0, relations=0, documents=0
    )
    base = {"doc": document_id, "contributor": contributor_id}
    query(
        store_name,
        "MERGE (d:Document {id: $doc}) SET d.filename = $filename, d.contributor = $contributor, "
        "d.entity_ids = $entity_ids, d.chunk_ids = $chunk_ids, d.title = $title, d.source_url = $source_url, "
        "d.source_type = $source_type, d.published = $published",
        {
            **base,
            "filename": filename,
            "title": (provenance or {}).get("title", ""),
            "source_url": (provenance or {}).get("source_url", ""),
            "source_type": (provenance or {}).get("source_type", ""),
            "published": (provenance or {}).get("published", ""),
            "entity_ids": [e["id"] for e in entities],
            "chunk_ids": [c["id"] for c in chunks],
        },
    )
    delta["documents"] += 1
    for batch in _batches(chunks, 500):
        query(
            store_name,
            "MATCH (d:Document {id: $doc}) UNWIND $rows AS r "
            "MERGE (c:Chunk {id: r.id}) "
            "SET c.document_id = $doc, c.text = r.text, c.terms = r.terms, c.page = r.page, c.ordinal = r.ordinal, "
            "c.vkey = r.vkey, c.language = r.language, c.nonlanguage = r.nonlanguage "
            "MERGE (d)-[:HAS_CHUNK]->(c) "
            "MERGE (v:ChunkVector {key: r.vkey}) ON CREATE SET v.chunk_id = r.id, v.embedding = vecf32(r.embedding)",
            {
                **base,
                "rows": [
                    {**row, "terms": cjk_terms(row["text"]), "embedding": vector32(row["embedding"])} for row in batch
                ],
            },
        )
    for batch in _batches(entities):
        rows = query(
            store_name,
            "UNWIND $rows AS r OPTIONAL MATCH (o:Entity {id: r.id}) WITH r, o IS NULL AS fresh "
            "MERGE (e:Entity {id: r.id}) "
            "ON CREATE SET e.normalized_name = r.key, e.type = r.type, "
            "e.document_ids = [], e.doc_contributors = [], e.contributors = [] "
            + _LEGACY_LISTS.format(keep="r, fresh, ")
            + "WITH r, fresh, e, e.document_ids + [$doc] AS docs, e.doc_contributors + [$contributor] AS dc, "
            "names0 + [r.name] AS names, descs0 + [r.description] AS descs, "
            "aliases0 + [[r.name] + r.aliases] AS aliases, akeys0 + [r.alias_keys] AS akeys, "
            "vkeys0 + [r.vkey] AS vkeys "
            + _ENTITY_SET
            + "MERGE (v:EntityVector {key: r.vkey}) ON CREATE SET v.entity_id = r.id, v.embedding = vecf32(r.embedding) "
            # The served text as this query left it: its `terms` are refreshed without reading it back.
            "RETURN fresh, e.id, e.name, e.description, e.terms",
            {**base, "rows": [{**row, "embedding": vector32(row["embedding"])} for row in batch]},
        )
        delta["entities"] += sum(1 for row in rows if row[0])
        _entity_terms_write(store_name, [row[1:] for row in rows])
    for batch in _batches(mentions):
        query(
            store_name,
            "UNWIND $rows AS r MATCH (c:Chunk {id: r.chunk_id}) MATCH (e:Entity {id: r.entity_id}) "
            "MERGE (c)-[:MENTIONS]->(e)",
            {"rows": list(batch)},
        )
    for rel_type, relation_rows in relations.items():
        kind = relation_type(rel_type)
        for batch in _batches(relation_rows):
            rows = query(
                store_name,
                f"UNWIND $rows AS r MATCH (a:Entity {{id: r.source}}) MATCH (b:Entity {{id: r.target}}) "
                f"OPTIONAL MATCH (a)-[o:{kind}]->(b) WITH a, b, r, o IS NULL AS fresh "
                f"MERGE (a)-[x:{kind}]->(b) "
                "ON CREATE SET x.document_ids = [], x.weights = [], x.doc_contributors = [], "
                "x.contributors = [], x.chunk_ids = [], x.count = 0 "
                "SET x.document_ids = x.document_ids + [$doc], x.weights = x.weights + [r.weight], "
                "x.doc_contributors = x.doc_contributors + [$contributor], "
                "x.contributors = CASE WHEN $contributor IN x.contributors THEN x.contributors "
                "ELSE x.contributors + [$contributor] END, "
                f"x.chunk_ids = (x.chunk_ids + [c IN r.chunk_ids WHERE NOT c IN x.chunk_ids])[0..{MAX_RELATION_CHUNK_IDS}], "
                "x.count = x.count + r.weight "
                "RETURN count(CASE WHEN fresh THEN 1 END)",
                {**base, "rows": list(batch)},
            )
            delta["relations"] += _count(rows)
    # Bounded: a document marked processed is found by the next search, on a replica as on the primary.
    replicas_catch_up(server_of_key(store_name))
    return delta


def store_document_remove(store_name: str, *, document_id: str) -> GraphCounts | None:
    """Remove one document's contribution: its chunks and mentions, its share of entities (their
    text recomputed from the documents left) and relations; what nothing supports any more
    disappears. Returns the (negative) change of the counts; None if the document was absent.

    Each update is one query, so a concurrent write of another document is never lost; what is
    left without documents is deleted by the next query."""
    rows = ro_query(
        store_name,
        "MATCH (d:Document {id: $doc}) RETURN d.entity_ids, d.chunk_ids",
        {"doc": document_id},
    )
    if not rows:
        return None
    entity_ids = list(rows[0][0] or [])
    chunk_ids = list(rows[0][1] or [])
    delta = GraphCounts(entities=0, relations=0, documents=0)
    for batch in _batches(entity_ids):
        query(
            store_name,
            "UNWIND $eids AS eid MATCH (:Entity {id: eid})-[x]->(:Entity) WHERE $doc IN x.document_ids "
            "WITH x, [i IN range(0, size(x.document_ids) - 1) WHERE x.document_ids[i] <> $doc] AS keep "
            "WITH x, [i IN keep | x.document_ids[i]] AS docs, [i IN keep | coalesce(x.weights[i], 1)] AS weights, "
            "[i IN keep WHERE i < size(coalesce(x.doc_contributors, [])) | x.doc_contributors[i]] AS dc "
            "SET x.document_ids = docs, x.weights = weights, x.doc_contributors = dc, "
            "x.contributors = reduce(acc = [], c IN dc | CASE WHEN c IN acc THEN acc ELSE acc + [c] END), "
            "x.chunk_ids = [c IN coalesce(x.chunk_ids, []) WHERE NOT c IN $chunks], "
            "x.count = reduce(total = 0, w IN weights | total + w)",
            {"doc": document_id, "eids": list(batch), "chunks": chunk_ids},
        )
        # A separate query: FalkorDB drops the SET above when a filtered DELETE follows it in one query.
        deleted = query(
            store_name,
            "UNWIND $eids AS eid MATCH (:Entity {id: eid})-[x]->(:Entity) WHERE size(x.document_ids) = 0 "
            "DELETE x RETURN count(*)",
            {"eids": list(batch)},
        )
        delta["relations"] -= _count(deleted)
    query(store_name, "MATCH (d:Document {id: $doc})-[:HAS_CHUNK]->(c:Chunk) DETACH DELETE c", {"doc": document_id})
    for batch in _batches(entity_ids):
        query(
            store_name,
            "UNWIND $eids AS eid MATCH (e:Entity {id: eid}) WHERE $doc IN e.document_ids "
            + _LEGACY_LISTS.format(keep="")
            + "WITH e, n, names0, descs0, aliases0, akeys0, vkeys0, "
            "[i IN range(0, n - 1) WHERE e.document_ids[i] <> $doc] AS keep "
            "WITH e, [i IN keep | e.document_ids[i]] AS docs, "
            "[i IN keep WHERE i < size(coalesce(e.doc_contributors, [])) | e.doc_contributors[i]] AS dc, "
            "[i IN keep | names0[i]] AS names, [i IN keep | descs0[i]] AS descs, "
            "[i IN keep | aliases0[i]] AS aliases, [i IN keep | akeys0[i]] AS akeys, [i IN keep | vkeys0[i]] AS vkeys "
            + _ENTITY_SET,
            {"doc": document_id, "eids": list(batch)},
        )
        _entity_terms_refresh(store_name, list(batch))
        deleted = query(
            store_name,
            "UNWIND $eids AS eid MATCH (e:Entity {id: eid}) WHERE size(e.document_ids) = 0 "
            "DETACH DELETE e RETURN count(*)",
            {"eids": list(batch)},
        )
        delta["entities"] -= _count(deleted)
    query(store_name, "MATCH (d:Document {id: $doc}) DETACH DELETE d", {"doc": document_id})
    delta["documents"] -= 1
    return delta


def store_entity_vectors_held(store_name: str, rows: Sequence[Mapping[str, str]]) -> list[tuple[str, str, list[float]]]:
    """(name, description, vector) for the rows {key (normalised name), name, description} whose exact name and
    description some document wrote on an entity of this store: the vector of that text it already holds (the
    per-document lists pair each document's name and description with its vector's key). Rows without one are
    absent; so are entities written before those lists existed."""
    if not rows:
        return []
    found = ro_query(
        store_name,
        "UNWIND $rows AS r MATCH (e:Entity {normalized_name: r.key}) "
        "WITH r, [i IN range(0, size(coalesce(e.doc_vkeys, [])) - 1) "
        "WHERE e.doc_names[i] = r.name AND e.doc_descriptions[i] = r.description | e.doc_vkeys[i]] AS keys "
        "WHERE size(keys) > 0 "
        "WITH r, head(collect(keys[0])) AS vkey "
        "MATCH (v:EntityVector {key: vkey}) RETURN r.name, r.description, v.embedding",
        {"rows": [{"key": r["key"], "name": r["name"], "description": r["description"]} for r in rows]},
    )
    return [(str(n), str(d), [float(x) for x in vector]) for n, d, vector in found if vector is not None]


# --- re-embedding ------------------------------------------------------------------------------


def store_embedding_texts(store_name: str, *, after: str, batch: int) -> list[tuple[str, str, str]]:
    """(chunk id, text, its document's title) pages of Chunk nodes, ordered by id after `after` (re-embedding)."""
    rows = ro_query(
        store_name,
        "MATCH (n:Chunk) WHERE n.id > $after WITH n ORDER BY n.id LIMIT $batch "
        "OPTIONAL MATCH (d:Document {id: n.document_id}) RETURN n.id, n.text, d.title ORDER BY n.id",
        {"after": after, "batch": batch},
    )
    return [(r[0], r[1] or "", r[2] or "") for r in rows]


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


def store_entity_contributions(store_name: str, *, after: str, batch: int) -> list[tuple[str, list[str], list[str]]]:
    """(id, names, descriptions) pages of Entity nodes ordered by id after `after`: one name and
    description per contributing document (what each document's entity vector embeds)."""
    rows = ro_query(
        store_name,
        "MATCH (e:Entity) WHERE e.id > $after "
        "RETURN e.id, e.doc_names, e.doc_descriptions, e.name, e.description, size(e.document_ids) "
        "ORDER BY e.id LIMIT $batch",
        {"after": after, "batch": batch},
    )
    out: list[tuple[str, list[str], list[str]]] = []
    for eid, names, descriptions, name, description, documents in rows:
        if names is None or descriptions is None:  # written before per-document lists existed
            count = max(1, int(documents or 0))
            names, descriptions = [name or ""] * count, [description or ""] * count
        out.append((eid, [n or "" for n in names], [d or "" for d in descriptions]))
    return out


def store_vectors_write(store_name: str, node_label: str, rows: Sequence[dict[str, Any]]) -> None:
    """Write vector nodes for Chunk or Entity nodes. Chunk rows are {id, vkey, embedding}; entity
    rows are {id, vkeys (one per contributing document), vectors: [{key, embedding}]}."""
    node = label(node_label)
    if node == "Chunk":
        cypher = (
            "UNWIND $rows AS r MATCH (c:Chunk {id: r.id}) SET c.vkey = r.vkey "
            "MERGE (v:ChunkVector {key: r.vkey}) ON CREATE SET v.chunk_id = r.id, v.embedding = vecf32(r.embedding)"
        )
    else:
        cypher = (
            "UNWIND $rows AS r MATCH (e:Entity {id: r.id}) SET e.doc_vkeys = r.vkeys "
            "WITH r UNWIND r.vectors AS vec MERGE (v:EntityVector {key: vec.key}) "
            "ON CREATE SET v.entity_id = r.id, v.embedding = vecf32(vec.embedding)"
        )
    if node == "Chunk":
        rows = [{**r, "embedding": vector32(r["embedding"])} for r in rows]
    else:
        rows = [{**r, "vectors": [{**v, "embedding": vector32(v["embedding"])} for v in r["vectors"]]} for r in rows]
    for batch in _batches(rows, 1000):
        query(store_name, cypher, {"rows": list(batch)})


# --- orphan vector compaction ------------------------------------------------------------------

# Vector nodes nothing points at: their chunk or entity is gone, or it points at another text's vector.
_ORPHANS = {
    "EntityVector": "MATCH (v:EntityVector) OPTIONAL MATCH (o:Entity {id: v.entity_id}) "
    "WITH v, o WHERE o IS NULL OR NOT v.key IN coalesce(o.doc_vkeys, [o.id]) ",
    "ChunkVector": "MATCH (v:ChunkVector) OPTIONAL MATCH (o:Chunk {id: v.chunk_id}) "
    "WITH v, o WHERE o IS NULL OR coalesce(o.vkey, '') <> v.key ",
}
COMPACT_WAIT_SECONDS = 120.0


def store_vectors_compact(store_name: str, *, dimension: int) -> dict[str, int]:
    """Delete the orphan ChunkVector/EntityVector nodes and rebuild their vector index (a deleted
    node would otherwise stay in the index, FalkorDB #2179). Drop, delete and re-create run in one
    MULTI, so no write interleaves; vector search answers from full text alone until the new
    index is built (this waits for it). Returns the number of nodes deleted per kind."""
    removed = {"entity_vectors": 0, "chunk_vectors": 0}
    for node, counter in (("EntityVector", "entity_vectors"), ("ChunkVector", "chunk_vectors")):
        orphans = ro_query(store_name, _ORPHANS[node] + "RETURN count(v)")
        if not orphans or not orphans[0][0]:
            continue
        pipe = falkordb_client(server_of_key(store_name)).connection.pipeline(transaction=True)
        pipe.execute_command("GRAPH.QUERY", store_name, f"DROP VECTOR INDEX FOR (v:{label(node)}) ON (v.embedding)")
        pipe.execute_command("GRAPH.QUERY", store_name, _ORPHANS[node] + "DELETE v")
        pipe.execute_command("GRAPH.QUERY", store_name, vector_index_create(node, dimension))
        try:
            dropped, deleted, created = pipe.execute(raise_on_error=False)
        except (redis.ConnectionError, redis.TimeoutError, OSError) as exc:
            raise ServiceUnavailable(STORE_DOWN, code="graph_store_unavailable") from exc
        finally:
            store_revision_bump(store_name, quiet=True)
            with _ensured_lock:
                for key in [k for k in _ensured if k[1] == store_name]:
                    _ensured.discard(key)
        if isinstance(dropped, Exception):
            logger.info("no vector index to drop on %s in %s: %s", node, store_name, dropped)
        for result in (deleted, created):
            if isinstance(result, Exception):
                raise result
        removed[counter] = _statistic(deleted, "Nodes deleted")
        _index_wait(store_name, node)
    return removed


def _statistic(reply: Any, name: str) -> int:
    """A counter from the statistics that end a raw GRAPH.QUERY reply ("Nodes deleted: 3")."""
    for line in reply[-1] if reply else []:
        text = line.decode() if isinstance(line, bytes) else str(line)
        if text.startswith(f"{name}:"):
            return int(float(text.split(":", 1)[1]))
    return 0


def store_vector_indexes_wait(store_name: str) -> None:
    """Wait until both vector indexes are operational: one created over nodes already written (a re-embed) is
    filled in the background, and a vector query before that fails ("Invalid arguments for procedure")."""
    for node in ("ChunkVector", "EntityVector"):
        _index_wait(store_name, label(node))


def _index_wait(store_name: str, node: str) -> None:
    deadline = time.monotonic() + COMPACT_WAIT_SECONDS
    while time.monotonic() < deadline:
        rows = ro_query(store_name, "CALL db.indexes() YIELD label, status WHERE label = $l RETURN status", {"l": node})
        if rows and all(str(row[0]) == "OPERATIONAL" for row in rows):
            return
        time.sleep(0.05)
    logger.warning("vector index of %s in %s still building after compaction", node, store_name)
