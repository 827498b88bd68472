"""Every write to graphs: rows in PostgreSQL, knowledge in FalkorDB, the world-graph merge.

Layout: `graphs` (CRUD, default graphs, stores, counts), `ingest` (the document write path and its entity
vectors), `maintenance` (vector compaction, re-embedding), `search` (metered entity search and lookup),
`placement` (which FalkorDB primary a graph lives on, moving it), `resolution` (one node per thing across documents),
`imports` (facts imported as triples; its callers import it by its module path).
"""

from exograph.graphs.services.graphs import (
    DEFAULT_GRAPH_NAMES,
    MAX_GRAPH_NAME,
    graph_counts_apply,
    graph_counts_refresh,
    graph_create,
    graph_default_for_user,
    graph_delete,
    graph_rename,
    graph_store_ensure,
    graph_stores_ensure_all,
    graph_writable,
    world_graph,
)
from exograph.graphs.services.ingest import entity_vectors_prepare, graph_document_remove, graph_document_write
from exograph.graphs.services.maintenance import graph_reembed, graph_vectors_compact, graph_vectors_compact_all
from exograph.graphs.services.placement import graph_placement, graph_store_move, placement_choose, placement_load
from exograph.graphs.services.search import entities_search, world_entity_lookup

__all__ = [
    "DEFAULT_GRAPH_NAMES",
    "MAX_GRAPH_NAME",
    "entities_search",
    "entity_vectors_prepare",
    "graph_counts_apply",
    "graph_counts_refresh",
    "graph_create",
    "graph_default_for_user",
    "graph_delete",
    "graph_document_remove",
    "graph_document_write",
    "graph_placement",
    "graph_reembed",
    "graph_rename",
    "graph_store_ensure",
    "graph_store_move",
    "graph_stores_ensure_all",
    "graph_vectors_compact",
    "graph_vectors_compact_all",
    "graph_writable",
    "placement_choose",
    "placement_load",
    "world_entity_lookup",
    "world_graph",
]
