"""The export's reads of the graph store (graphs/export.py): pages in id order, never the whole graph."""

from __future__ import annotations

from typing import Any

from exograph.graphs.store.core import ro_query
from exograph.graphs.store.reads import STRUCTURAL

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
            "structural": STRUCTURAL,
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
