"""Permission-scoped reads of graphs: lookups, listing, hybrid entity search, the world graph.

Pure reads. The ones that may return other accounts' world knowledge (world_entity_read, and
graphs.retrieval's retrieve and entity_search) also return those contributors' ids; the services the interfaces
call (graphs.services.entities_search, world_entity_lookup) hand them to billing.

Layout: `graphs` (a readable or writable graph, listing, the embedder check), `search` (the graphs a search reads,
its input checks and list fusion, which graphs.retrieval imports by module path), `world` (a World Graph entity and
name suggestions), `explorer` (neighbourhood and overview), `viewer` (a document's contents in its graph).
"""

from exograph.graphs.selectors.explorer import (
    MAX_EXPLORE_HOPS,
    MAX_EXPLORE_LIMIT,
    MAX_OVERVIEW_LIMIT,
    OVERVIEW_LIMIT,
    graph_explore,
    graph_overview,
)
from exograph.graphs.selectors.graphs import (
    embedder_check,
    graph_get_for_user,
    graph_list_for_user,
    graphs_holding_knowledge_for_user,
)
from exograph.graphs.selectors.search import MAX_N_RESULTS, MAX_QUERY_LENGTH, search_graphs_for_user
from exograph.graphs.selectors.viewer import document_contents_read, document_openings_read
from exograph.graphs.selectors.world import MAX_RELATED, world_entity_read

__all__ = [
    "MAX_EXPLORE_HOPS",
    "MAX_EXPLORE_LIMIT",
    "MAX_N_RESULTS",
    "MAX_OVERVIEW_LIMIT",
    "MAX_QUERY_LENGTH",
    "MAX_RELATED",
    "OVERVIEW_LIMIT",
    "document_contents_read",
    "document_openings_read",
    "embedder_check",
    "graph_explore",
    "graph_get_for_user",
    "graph_list_for_user",
    "graph_overview",
    "graphs_holding_knowledge_for_user",
    "search_graphs_for_user",
    "world_entity_read",
]
