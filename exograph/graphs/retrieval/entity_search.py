"""Entity search (search_entities: REST, MCP, the web search page): hybrid full text + vector over entities and
the chunks that mention them."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any, TypedDict

from exograph.accounts.models import User
from exograph.core.scope import Scope
from exograph.core.snippets import snippet
from exograph.graphs import store
from exograph.graphs.models import WORLD_GRAPH_ID
from exograph.graphs.retrieval.paths import search_pool
from exograph.graphs.selectors import embedder_check
from exograph.graphs.selectors.search import (
    MAX_N_RESULTS,
    VECTOR_OVERFETCH,
    _check_n_results,
    _check_query,
    _fuse,
    search_graphs_for_user,
)
from exograph.graphs.types import EntityHit


class EntitySearch(TypedDict):
    hits: list[EntityHit]
    # Accounts whose World Graph knowledge is in the hits (the asking user included; billing drops them).
    contributor_ids: list[int]


def entity_search(
    *, user: User, query: str, n_results: int = 10, graph_id: str | None = None, scope: Scope
) -> EntitySearch:
    """Hybrid entity search: full-text + vector over entities and the chunks that mention them,
    fused by reciprocal rank; relevance is 0..1 within the response (the best hit is 1.0).
    Also returns the ids of the accounts whose World Graph knowledge the hits carry.

    Raises ValidationError (empty/too long query, n_results outside 1..100), NotFound, Conflict
    (graph built with another embedder), ServiceUnavailable (graph store down)."""
    text = _check_query(query)
    n_results = _check_n_results(n_results)
    graphs = search_graphs_for_user(user=user, scope=Scope(scope), graph_id=graph_id)
    if not graphs:
        return {"hits": [], "contributor_ids": []}
    embedders = [embedder_check(graph=graph) for graph in graphs]
    embedder = embedders[0]
    text_query = store.fulltext_query(text)
    k = min(MAX_N_RESULTS, max(20, n_results * 2))
    # The four reads of each graph run on the pool, overlapping (FalkorDB serves reads on several
    # threads); the full-text ones start while this thread embeds the query.
    futures: dict[str, list[Future[dict[str, list[tuple[str, float, str]]]]]] = {g.id: [] for g in graphs}
    for graph in graphs:
        futures[graph.id].append(
            search_pool().submit(
                store.store_search_text_lists, graph.store_name, text_query=text_query, k=k, chunks=False
            )
        )
        futures[graph.id].append(
            search_pool().submit(
                store.store_search_text_lists, graph.store_name, text_query=text_query, k=k, entities=False
            )
        )
    vector = [float(x) for x in embedder.embed_one(text)]
    for graph in graphs:
        for entities_only in (True, False):
            futures[graph.id].append(
                search_pool().submit(
                    store.store_search_vector_lists,
                    graph.store_name,
                    vector=vector,
                    k=k,
                    vector_k=k + VECTOR_OVERFETCH,
                    chunks=not entities_only,
                    entities=entities_only,
                )
            )
    per_graph: dict[str, dict[str, list[tuple[str, float, str]]]] = {}
    for gid, pending in futures.items():
        merged: dict[str, list[tuple[str, float, str]]] = {}
        for future in pending:
            merged.update(future.result())
        per_graph[gid] = merged
    scores, passages, direct = _fuse(per_graph)
    # The same entity found in the World Graph and in one of the user's world-scope graphs: one hit.
    world_ids = {entity_id for (gid, entity_id) in scores if gid == WORLD_GRAPH_ID}
    ranked = sorted(
        (key for key in scores if key[0] == WORLD_GRAPH_ID or key[1] not in world_ids),
        key=lambda key: (-scores[key], key[1]),
    )[:n_results]
    if not ranked:
        return {"hits": [], "contributor_ids": []}
    by_graph: dict[str, list[str]] = {}
    for gid, entity_id in ranked:
        by_graph.setdefault(gid, []).append(entity_id)
    graph_rows = {graph.id: graph for graph in graphs}
    details: dict[tuple[str, str], dict[str, Any]] = {}
    for gid, ids in by_graph.items():
        found = store.store_entities(graph_rows[gid].store_name, ids)
        lacking = [eid for eid in ids if eid in found and not found[eid]["description"] and (gid, eid) not in passages]
        fallback = store.store_entity_passages(graph_rows[gid].store_name, lacking) if lacking else {}
        for eid, row in found.items():
            row["fallback"] = fallback.get(eid, "")
            details[(gid, eid)] = row
    top = scores[ranked[0]]
    hits: list[EntityHit] = []
    contributors: set[int] = set()
    for key in ranked:
        detail = details.get(key)
        if detail is None:
            continue  # deleted between the two reads
        row = detail
        gid, entity_id = key
        if direct.get(key) and row["description"]:
            context = row["description"]
        else:
            context = passages.get(key) or row["description"] or row["fallback"]
        hits.append(
            {
                "id": entity_id,
                "name": row["name"],
                "type": row["type"],
                "graph_id": gid,
                "graph_name": graph_rows[gid].name,
                "relevance": round(scores[key] / top, 3),
                "context": snippet(context, text),
            }
        )
        if gid == WORLD_GRAPH_ID:
            contributors.update(int(c) for c in row["contributors"])
    return {"hits": hits, "contributor_ids": sorted(contributors)}
