"""Maintenance: orphan vector compaction and re-embedding with the current embedder."""

from __future__ import annotations

import logging

import redis

from exograph.core.errors import (
    ServiceUnavailable,
)
from exograph.graphs import store
from exograph.graphs.embeddings import chunk_embedding_text, get_embedder
from exograph.graphs.models import Graph
from exograph.graphs.services.ingest import entity_text

logger = logging.getLogger(__name__)


def graph_vectors_compact(*, graph: Graph) -> dict[str, int]:
    """Delete graph's orphan vector nodes (left by removed documents and changed texts) and rebuild
    its vector indexes; returns the nodes deleted per kind. Raises 503."""
    if not graph.embedding_dim:
        return {"entity_vectors": 0, "chunk_vectors": 0}
    removed = store.store_vectors_compact(graph.store_name, dimension=int(graph.embedding_dim))
    if any(removed.values()):
        logger.info(
            "graph %s compacted: %d entity and %d chunk vector nodes dropped",
            graph.id,
            removed["entity_vectors"],
            removed["chunk_vectors"],
        )
    return removed


def graph_vectors_compact_all() -> int:
    """Compact the vector nodes of every graph (the periodic job); a store that fails is logged and
    skipped. Returns the number of vector nodes deleted."""
    total = 0
    for graph in Graph.objects.order_by("created"):
        try:
            total += sum(graph_vectors_compact(graph=graph).values())
        except (ServiceUnavailable, redis.RedisError):
            logger.exception("vector compaction of graph %s failed", graph.id)
    return total


def graph_reembed(*, graph: Graph, batch: int = 256) -> dict[str, int]:
    """Re-embed every chunk and entity of graph with the current embedder and record it on the row."""
    embedder = get_embedder()
    store.store_vectors_reset(graph.store_name)
    counts = {"chunks": 0, "entities": 0}
    after = ""
    while True:
        page = store.store_embedding_texts(graph.store_name, after=after, batch=batch)
        if not page:
            break
        vectors = embedder.embed([chunk_embedding_text(text, title=title) for _, text, title in page])
        rows = [
            {"id": node_id, "embedding": [float(x) for x in vector], "vkey": store.vector_key(node_id, vector)}
            for (node_id, _, _), vector in zip(page, vectors, strict=True)
        ]
        store.store_vectors_write(graph.store_name, "Chunk", rows)
        counts["chunks"] += len(rows)
        after = page[-1][0]
    after = ""
    while True:
        entities = store.store_entity_contributions(graph.store_name, after=after, batch=batch)
        if not entities:
            break
        # One vector per contributing document's text (the same text embeds once).
        texts = list(
            dict.fromkeys(
                entity_text(name, description)
                for _, names, descriptions in entities
                for name, description in zip(names, descriptions, strict=True)
            )
        )
        keyed = {}
        for text, vector in zip(texts, embedder.embed(texts), strict=True):
            keyed[text] = [float(x) for x in vector]
        entity_rows = []
        for entity_id, names, descriptions in entities:
            own = {
                text: store.vector_key(entity_id, keyed[text])
                for text in (entity_text(n, d) for n, d in zip(names, descriptions, strict=True))
            }
            entity_rows.append(
                {
                    "id": entity_id,
                    "vkeys": [own[entity_text(n, d)] for n, d in zip(names, descriptions, strict=True)],
                    "vectors": [{"key": key, "embedding": keyed[text]} for text, key in own.items()],
                }
            )
        store.store_vectors_write(graph.store_name, "Entity", entity_rows)
        counts["entities"] += len(entity_rows)
        after = entities[-1][0]
    Graph.objects.filter(pk=graph.pk).update(embedding_model=embedder.name, embedding_dim=embedder.dimension)
    graph.embedding_model, graph.embedding_dim = embedder.name, embedder.dimension
    store.store_ensure(graph.store_name, dimension=embedder.dimension)
    store.store_vector_indexes_wait(graph.store_name)  # the new indexes fill in the background: searchable after
    return counts
