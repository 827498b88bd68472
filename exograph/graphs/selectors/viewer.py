"""The document viewer's read: what a document wrote to its graph, page by page."""

from __future__ import annotations

from typing import Any

from exograph.graphs import store
from exograph.graphs.models import Graph

VIEWER_PART_CHUNKS = 20  # documents without page numbers (text, some DOCX) are shown in parts of this many chunks
VIEWER_ENTITIES = 200


def _viewer_page(page: Any, ordinal: Any) -> int:
    """A chunk's page in the viewer: its page number, or its part for documents without pages."""
    if isinstance(page, int) and page > 0:
        return page
    return int(ordinal or 0) // VIEWER_PART_CHUNKS + 1


def document_contents_read(*, graph: Graph, document_id: str, page: int | None, chunk_id: str) -> dict[str, Any]:
    """What a document wrote to its graph, for the document viewer: its pages (or parts, for documents without
    page numbers), the chunks of one page in reading order, and the entities it contributed. `chunk_id` picks
    the page when `page` is not given; a page out of range falls back to the first. Pure read; the caller checks
    the document is the user's. Raises ServiceUnavailable (graph store down)."""
    name = graph.store_name
    rows = store.ro_query(
        name,
        "MATCH (d:Document {id: $doc}) WITH d MATCH (d)-[:HAS_CHUNK]->(c:Chunk) RETURN c.id, c.page, c.ordinal",
        {"doc": document_id},
    )
    where = {str(r[0]): _viewer_page(r[1], r[2]) for r in rows}
    pages = sorted(set(where.values()))
    numbered = any(isinstance(r[1], int) and r[1] > 0 for r in rows)
    if page is None or page not in pages:
        page = where.get(chunk_id) or (pages[0] if pages else 1)
    wanted = [cid for cid, p in where.items() if p == page]
    chunks = store.store_chunks(name, wanted)
    ordinal = {str(r[0]): int(r[2] or 0) for r in rows}
    listed = store.ro_query(name, "MATCH (d:Document {id: $doc}) RETURN d.entity_ids", {"doc": document_id})
    entity_ids = [str(e) for e in ((listed[0][0] if listed else None) or [])]
    details = store.store_entities(name, entity_ids[:VIEWER_ENTITIES])
    entities = sorted(
        ({"id": eid, "name": str(e["name"] or eid), "type": str(e["type"] or "")} for eid, e in details.items()),
        key=lambda e: (e["type"], e["name"].casefold()),
    )
    return {
        "pages": pages,
        "numbered": numbered,
        "page": page,
        "chunks": [
            {"id": cid, "text": chunks[cid]["text"], "cited": cid == chunk_id}
            for cid in sorted(wanted, key=lambda c: ordinal[c])
            if cid in chunks
        ],
        "entities": entities,
        "entity_total": len(entity_ids),
    }


def document_openings_read(*, documents: list[tuple[str, str]]) -> dict[str, dict[str, Any]]:
    """Each document's opening chunk (its first in reading order): chunk_id, page, text, by document id, for the
    (graph_id, document_id) pairs given (documents the caller has already found the user may read: a retrieval's own
    items). A document its graph no longer holds is left out. Pure read. Raises ServiceUnavailable (store down)."""
    by_graph: dict[str, list[str]] = {}
    for graph_id, document_id in documents:
        by_graph.setdefault(graph_id, []).append(document_id)
    openings: dict[str, dict[str, Any]] = {}
    for graph in Graph.objects.filter(id__in=list(by_graph)):
        rows = store.ro_query(
            graph.store_name,
            "MATCH (d:Document) WHERE d.id IN $docs MATCH (d)-[:HAS_CHUNK]->(c:Chunk) "
            "WITH d, c ORDER BY c.ordinal WITH d, collect(c)[0] AS c RETURN d.id, c.id, c.page, c.text",
            {"docs": by_graph[graph.id]},
        )
        for document_id, chunk_id, page, text in rows:
            openings[str(document_id)] = {"chunk_id": str(chunk_id), "page": page, "text": str(text or "")}
    return openings
