"""Writes of the graph store: one document's knowledge in UNWIND batches, its removal, re-embedding."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import redis

from exograph.graphs.store.core import (
    MAX_RELATION_CHUNK_IDS,
    _batches,
    _ensured,
    _ensured_lock,
    label,
    query,
    relation_type,
    ro_query,
)

logger = logging.getLogger(__name__)


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
