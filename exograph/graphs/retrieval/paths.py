"""The search paths over one graph (each usable alone): passages directly, entity linking, the typed capped walk;
and the thread pool that overlaps a search's FalkorDB reads."""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from exograph.graphs import store
from exograph.graphs.models import Graph
from exograph.graphs.retrieval.checks import check_int
from exograph.graphs.retrieval.keys import question_keys
from exograph.graphs.retrieval.rank import rrf
from exograph.graphs.retrieval.types import (
    MAX_HOPS,
    WALK_CAP,
    Relation,
)
from exograph.graphs.selectors.search import VECTOR_OVERFETCH

# --- entity search (search_entities: REST, MCP, the web search page) ---------------------------

# Overlaps a search's FalkorDB reads (store calls only: no ORM in these threads).
_pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="graph-search")


def _renew_pool() -> None:
    """A forked child (Celery prefork, gunicorn) gets a fresh pool: the parent's threads do not exist there."""
    global _pool
    _pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="graph-search")


os.register_at_fork(after_in_child=_renew_pool)


def search_pool() -> ThreadPoolExecutor:
    """The current process's pool (renewed after a fork)."""
    return _pool


# --- the search paths (one graph) --------------------------------------------------------------


def passages_search(*, graph: Graph, text_query: str, vector: list[float], k: int) -> dict[str, float]:
    """Chunks by full text and by vector, directly over chunks, fused: chunk id -> RRF score."""
    text_hits = store.store_chunk_text_hits(graph.store_name, text_query=text_query, k=k)
    vector_hits = store.store_chunk_vector_hits(graph.store_name, vector=vector, k=k, vector_k=k + VECTOR_OVERFETCH)
    return rrf([[c for c, _ in text_hits], [c for c, _ in vector_hits]])


def entities_link(*, graph: Graph, question: str, text_query: str, vector: list[float], k: int) -> dict[str, float]:
    """Entities by exact name or alias (question n-grams), full text and vector, fused: entity id -> score.

    Exact matches count twice: a name the question spells out is the strongest link there is."""
    exact = store.store_entity_key_hits(graph.store_name, keys=question_keys(question), limit=k)
    lists = store.store_search_text_lists(graph.store_name, text_query=text_query, k=k, chunks=False)
    lists.update(
        store.store_search_vector_lists(
            graph.store_name, vector=vector, k=k, vector_k=k + VECTOR_OVERFETCH, chunks=False
        )
    )
    return rrf(
        [
            exact,
            exact,
            [e for e, _, _ in lists.get("entity_text", [])],
            [e for e, _, _ in lists.get("entity_vector", [])],
        ]
    )


def graph_walk(*, graph: Graph, seeds: Sequence[str], hops: int, cap: int = WALK_CAP) -> list[Relation]:
    """Relations within `hops` of the seeds over typed relation edges only; each hop gets cap // hops
    relations at most (a busy first hop cannot crowd out deeper ones) and prefers edges between seeds."""
    hops = check_int(hops, name="hops", low=1, high=MAX_HOPS)
    share = max(1, cap // hops)
    frontier = list(dict.fromkeys(seeds))
    expanded: list[str] = []  # entities whose edges an earlier hop already considered
    relations: list[Relation] = []
    for hop in range(1, hops + 1):
        rows = store.store_walk_hop(graph.store_name, frontier=frontier, hits=seeds, visited=expanded, limit=share)
        expanded.extend(frontier)
        reached: list[str] = []
        for row in rows:
            relations.append(relation_from_row(row, hop=hop))
            if row["reached"] not in reached and row["reached"] not in expanded:
                reached.append(row["reached"])
        frontier = reached
        if not frontier:
            break
    unique: dict[tuple[str, str, str], Relation] = {}
    for relation in relations:
        unique.setdefault((relation.source_id, relation.type, relation.target_id), relation)
    return list(unique.values())


def relation_from_row(row: dict[str, Any], *, hop: int) -> Relation:
    return Relation(
        source_id=row["source_id"],
        source=row["source"],
        type=row["type"],
        target_id=row["target_id"],
        target=row["target"],
        strength=row["strength"],
        chunk_ids=row["chunk_ids"],
        document_ids=row["document_ids"],
        contributors=[int(c) for c in row["contributors"]],
        hop=hop,
    )
