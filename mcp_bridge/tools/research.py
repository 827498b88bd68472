"""The research tools: create_research_session, get_research_status, list_research_sessions."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import Field

from mcp_bridge import formatting
from mcp_bridge.tools.base import (
    READ_ONLY,
    WRITE_OPEN_WORLD,
    Cursor,
    CursorPageOut,
    OperationId,
    ResearchOut,
    ScopeArg,
    bridge_of,
    bridge_tool,
    client_for,
    cursor_page,
    result,
)


@bridge_tool(
    name="create_research_session",
    title="Start research",
    annotations=WRITE_OPEN_WORLD,
    guide=('"Research X"', "an autonomous research session that reads papers and articles (30-100 credits)"),
)
async def create_research_session(
    ctx: Context,
    query: Annotated[
        str, Field(min_length=3, max_length=2000, description="The research topic or question (3-2,000 characters).")
    ],
    budget_credits: Annotated[
        int | None,
        Field(
            ge=1,
            le=100_000,
            description="Credit limit: at most this many credits are held and spent (at least the model's "
            "price, 30; default 30).",
        ),
    ] = None,
    graph_id: Annotated[str | None, Field(max_length=64, description="Add the findings to this graph.")] = None,
    graph_scope: ScopeArg = None,
    operation_id: OperationId = None,
) -> Annotated[CallToolResult, ResearchOut]:
    """Start an AI research session: it searches papers and articles on the web and the platform's own
    knowledge (the shared world graph; in a private session your own private documents too, never another
    account's), reads them, adds what it learns to your graph and writes a cited report. A world session never
    reads private documents: its findings are shared. A document already in the target graph is cited, not copied.

    Use it when search_entities and get_world_graph do not answer the question. Returns the session ID at
    once (status pending); the work runs in the background: check it with get_research_status. World
    scope contributes the findings to the shared world graph (you earn when others use them); private
    keeps them yours. Costs 30-100 credits depending on the model, reserved up front (at most
    budget_credits) and what is not spent is returned. Pass operation_id so a retry starts one session.
    """
    body: dict[str, Any] = {"query": query}
    for name, value in (("budget_credits", budget_credits), ("graph_id", graph_id), ("graph_scope", graph_scope)):
        if value is not None:
            body[name] = value
    async with client_for(ctx) as exo:
        session = await exo.research_create(body=body, idempotency_key=operation_id)
    return result(formatting.format_research_created(session), session)


@bridge_tool(
    name="get_research_status",
    title="Research status",
    annotations=READ_ONLY,
    guide=('"Check status of..."', "a research session's progress, and its cited report when completed"),
)
async def get_research_status(
    ctx: Context,
    session_id: Annotated[
        str, Field(min_length=1, max_length=64, description="Research session ID (from create_research_session).")
    ],
) -> Annotated[CallToolResult, ResearchOut]:
    """Check a research session: status, progress and credits; when completed, the summary, key findings
    with numbered citations, open questions and the sources (papers and articles with links). Free.
    """
    bridge = bridge_of(ctx)
    async with client_for(ctx) as exo:
        session = await exo.research(session_id=session_id)
    page = formatting.format_research_status(session, limit=bridge.settings.max_output_chars)
    structured = session
    if page.cut and isinstance(session.get("report"), dict):
        report = dict(session["report"])
        report["sources"] = list(report.get("sources") or [])[: page.shown]
        structured = {
            **session,
            "report": report,
            "truncated": {
                "shown": page.shown,
                "omitted": page.total - page.shown,
                "how_to_get_more": "Export the full report: GET /api/v1/research/{id}/export/?format=md.",
            },
        }
    return result(page.text, structured)


@bridge_tool(
    name="list_research_sessions",
    title="List research sessions",
    annotations=READ_ONLY,
    guide=('"Show my research sessions"', "your research sessions with their status"),
)
async def list_research_sessions(
    ctx: Context,
    graph_scope: ScopeArg = None,
    limit: Annotated[int, Field(ge=1, le=100, description="Maximum number of sessions (1-100).")] = 10,
    cursor: Cursor = None,
) -> Annotated[CallToolResult, CursorPageOut]:
    """List your research sessions, newest first, filtered by graph scope.

    Returns each session's ID (for get_research_status), topic, status and creation date. Paged: when
    more exist the result names the cursor for the next page. Free.
    """
    return await cursor_page(
        ctx,
        graph_scope=graph_scope,
        fetch=lambda exo, scope: exo.research_sessions(graph_scope=scope, limit=limit, cursor=cursor),
        format_page=formatting.format_research_sessions,
    )
