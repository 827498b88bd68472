"""The graph tools: search_entities, get_world_graph, list_graphs (free reads)."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import Field

from mcp_bridge import formatting
from mcp_bridge.tools.base import (
    READ_ONLY,
    PageOut,
    ScopeArg,
    SearchOut,
    WorldGraphOut,
    _trim,
    bridge_of,
    bridge_tool,
    client_for,
    effective_scope,
    offset_page,
    result,
)


@bridge_tool(
    name="search_entities",
    title="Search entities",
    annotations=READ_ONLY,
    guide=('"Search for X"', "find entities (people, concepts, methods…) in your graphs or the world graph"),
)
async def search_entities(
    ctx: Context,
    query: Annotated[str, Field(min_length=1, max_length=1000, description="Search query (words or a question).")],
    n_results: Annotated[int, Field(ge=1, le=100, description="Number of results (1-100).")] = 10,
    graph_id: Annotated[
        str | None, Field(max_length=64, description="Limit to one graph (an ID from list_graphs).")
    ] = None,
    graph_scope: ScopeArg = None,
) -> Annotated[CallToolResult, SearchOut]:
    """Search for entities in your ExoGraph knowledge graphs by meaning and by name.

    Returns a numbered list of entities with their IDs, graph, relevance (0-1, best = 1.0) and a context
    snippet. Use an entity's name or ID with get_world_graph to see how it relates to other entities.
    Free.
    """
    bridge = bridge_of(ctx)
    async with client_for(ctx) as exo:
        response = await exo.search_entities(
            query=query, n_results=n_results, graph_id=graph_id, graph_scope=graph_scope
        )
    page = formatting.format_search(
        response, scope=effective_scope(ctx, graph_scope), limit=bridge.settings.max_output_chars, graph_id=graph_id
    )
    return result(page.text, _trim(response, "results", page, "Ask for fewer results (n_results)."))


@bridge_tool(
    name="get_world_graph",
    title="Explore the world graph",
    annotations=READ_ONLY,
    guide=('"How does X relate to Y?"', "an entity's relationships in the shared world graph, with sources"),
)
async def get_world_graph(
    ctx: Context,
    entity_id: Annotated[
        str,
        Field(min_length=1, max_length=300, description="Entity to explore: an ID from search_entities or a name."),
    ],
    evidence: Annotated[bool, Field(description="Include source passages for each relationship.")] = False,
) -> Annotated[CallToolResult, WorldGraphOut]:
    """Explore how an entity relates to others in the world knowledge graph (shared by all users).

    Returns the related entities, strongest first, with the relationship, its strength (supporting
    connections) and the source documents; evidence=true adds the supporting passages. An unknown
    entity answers with suggestions. Free.
    """
    bridge = bridge_of(ctx)
    async with client_for(ctx) as exo:
        response = await exo.world_entity(entity_id=entity_id, evidence=evidence)
    page = formatting.format_world_graph(response, limit=bridge.settings.max_output_chars)
    return result(page.text, _trim(response, "related", page, "Ask without evidence."))


@bridge_tool(
    name="list_graphs",
    title="List graphs",
    annotations=READ_ONLY,
    guide=('"List my graphs"', "your knowledge graphs with their IDs, scope and type"),
)
async def list_graphs(
    ctx: Context,
    graph_scope: ScopeArg = None,
    limit: Annotated[int, Field(ge=1, le=200, description="Graphs per page (1-200).")] = 50,
    offset: Annotated[int, Field(ge=0, description="Skip this many graphs (paging).")] = 0,
) -> Annotated[CallToolResult, PageOut]:
    """List your knowledge graphs (🌐 world: shared knowledge; 🔒 private: only yours).

    Returns each graph's ID (use it as graph_id in search_entities), name, scope, type and creation date.
    Paged: the result says when more graphs exist and which offset gets them. Free.
    """
    return await offset_page(
        ctx,
        tool="list_graphs",
        graph_scope=graph_scope,
        offset=offset,
        fetch=lambda exo: exo.graphs(graph_scope=graph_scope, limit=limit, offset=offset),
        format_page=formatting.format_graphs,
    )
