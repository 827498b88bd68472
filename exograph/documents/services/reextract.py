"""Backfill: a processed document's knowledge extracted again with the current extractor, free of charge.

The user paid for the document once; a better extractor (issue 25: typed NER names, one node per thing) reaches
the graphs written before it through `graph_reextract` (manage.py graph_reextract). A processed document keeps
no chunk rows in PostgreSQL: its passages are read back from the graph (text, page, order and stored vector),
extracted again (documents.extraction.document_extract: non-language passages left out, resolution, pruning;
the title entity as the index stage adds it) and the document is written again through the same
graph_document_write (replacing what it wrote before, the World Graph's share too). No credits are taken and
no ledger entry is made; the document's entity and relation counts are updated. Chunks whose vector cannot be
read back are embedded again with the graph's embedder.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from exograph.documents.extraction import document_extract
from exograph.documents.models import Document, DocumentStatus
from exograph.documents.services.stages import _title_entity_add, extraction_graph_inputs
from exograph.graphs import store
from exograph.graphs.models import Graph
from exograph.graphs.types import ChunkIn

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ReextractResult:
    document_id: str
    chunks: int
    entities_before: int
    entities_after: int
    relations_after: int


def _stored_chunks(graph: Graph, document_id: str) -> list[dict[str, Any]]:
    rows = store.ro_query_primary(
        graph.store_name,
        "MATCH (d:Document {id: $doc})-[:HAS_CHUNK]->(c:Chunk) "
        "OPTIONAL MATCH (v:ChunkVector {key: c.vkey}) "
        "RETURN c.id, c.text, c.page, c.ordinal, v.embedding ORDER BY c.ordinal, c.id",
        {"doc": document_id},
    )
    return [{"id": r[0], "text": r[1] or "", "page": r[2], "ordinal": int(r[3] or 0), "embedding": r[4]} for r in rows]


def document_reextract(*, document: Document) -> ReextractResult:
    """Extract one processed document again and rewrite its knowledge in its graph (module docstring).
    Raises ServiceUnavailable when the graph store is down."""
    from exograph.graphs.embeddings import chunk_embedding_text, get_embedder
    from exograph.graphs.services import graph_document_write

    graph = document.graph
    rows = _stored_chunks(graph, str(document.id))
    missing = [row for row in rows if not row["embedding"]]
    if missing:
        vectors = get_embedder().embed([chunk_embedding_text(row["text"], title=document.title) for row in missing])
        for row, vector in zip(missing, vectors, strict=True):
            row["embedding"] = vector
    chunks = [
        ChunkIn(
            id=row["id"],
            text=row["text"],
            page=row["page"],
            ordinal=row["ordinal"],
            embedding=[float(x) for x in row["embedding"]],
        )
        for row in rows
    ]
    extraction = document_extract(chunks)
    _title_entity_add(extraction, title=document.title, chunk_ids=[c.id for c in chunks])
    entities, mentions, relations = extraction_graph_inputs(extraction)
    graph_document_write(
        graph=graph,
        document_id=str(document.id),
        filename=document.filename,
        contributor=document.owner,
        provenance={
            "title": document.title,
            "source_url": document.source_url,
            "source_type": str(document.source_type),
            "published": document.published.isoformat() if document.published else "",
        },
        chunks=chunks,
        entities=entities,
        mentions=mentions,
        relations=relations,
    )
    before = document.entity_count
    Document.objects.filter(pk=document.pk).update(
        entity_count=len(extraction.entities), relation_count=len(extraction.relations), warnings=extraction.warnings
    )
    logger.info("document %s re-extracted (%d chunks, %d entities)", document.id, len(chunks), len(entities))
    return ReextractResult(str(document.id), len(chunks), before, len(extraction.entities), len(extraction.relations))


def graph_reextract(
    *, graph: Graph, progress: Callable[[int, int, ReextractResult], None] | None = None
) -> list[ReextractResult]:
    """Re-extract every processed document of a graph, oldest first, calling progress(done, total, result)
    after each. Free: no credits are taken."""
    documents = list(
        Document.objects.filter(graph=graph, status=DocumentStatus.PROCESSED, deleted_at__isnull=True)
        .select_related("graph", "owner")
        .order_by("created", "id")
    )
    results: list[ReextractResult] = []
    for done, document in enumerate(documents, start=1):
        result = document_reextract(document=document)
        results.append(result)
        if progress:
            progress(done, len(documents), result)
    return results
