"""The server: every registered tool, and the initialize instructions written from their guides."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Literal

from mcp.server.mcpserver import Context

from mcp_bridge.client import ExoGraphClient
from mcp_bridge.config import BridgeSettings
from mcp_bridge.tools.base import CONTRACT_ORDER, TOOLS, Bridge, ClientFactory, ExoGraphMCPServer, ToolSpec

INSTRUCTIONS_HEAD = """ExoGraph: your knowledge graphs (private) and the shared world graph, built from documents and research.

Which tool fits which request:
"""

INSTRUCTIONS_TAIL = """
How to chain: search_entities first (it gives entity names and IDs), then get_world_graph on the top
result to see its relationships and sources. When the graph lacks the answer, create_research_session
(then get_research_status until it is completed; its findings join the graph, so search again). For a
conversational answer with numbered citations use send_chat_message (pass its session_id to continue).
Use graph_scope="world" for shared knowledge and "private" for the user's own graphs; the default comes
from the configuration.

Cite what the tools return: name the entities, documents (file names), sources and IDs you used; never
invent sources. If a search finds nothing, say so and suggest uploading a document or starting research.

Costs: searching, exploring, listing and creating a chat session are free; uploads cost 5 credits + 1
per page; chat messages 3 (snap) or 10 (ponder; 3 on the offline reader); research 30-100 credits
(reserved up front, what is not spent is returned). Tell the user before spending. Pass an operation_id on paid calls so a retry is
charged once. Every call counts against the account's rate limit (60/minute, 10,000/day, shared with
the REST API).

Errors say what went wrong and how to fix it: insufficient credits (with what is needed and the
balance), the rate limit (with the time to wait), not found, and "Not allowed" when the API key is
read-only (it may only search, explore and list) or its monthly credit cap is spent: tell the user,
don't retry."""


def instructions_for(specs: list[ToolSpec]) -> str:
    rank = {name: n for n, name in enumerate(CONTRACT_ORDER)}
    ordered = sorted(specs, key=lambda spec: rank.get(spec.name, len(rank)))
    rows = "\n".join(f"- {spec.guide[0]} → {spec.name}: {spec.guide[1]}" for spec in ordered)
    return INSTRUCTIONS_HEAD + rows + "\n" + INSTRUCTIONS_TAIL


def build_server(
    *,
    client_for: ClientFactory,
    settings: BridgeSettings,
    default_scope: Callable[[Context], str | None],
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = "INFO",
) -> ExoGraphMCPServer:
    """An MCP server with every tool of TOOLS, talking to the REST API through `client_for`."""
    bridge = Bridge(client_for=client_for, settings=settings, default_scope=default_scope)
    server = ExoGraphMCPServer(
        bridge=bridge,
        name="exograph",
        title="ExoGraph",
        description="Search, explore and grow your ExoGraph knowledge graphs.",
        instructions=instructions_for(TOOLS),
        version="1.0.0",
        log_level=log_level,
    )
    for spec in TOOLS:
        description = spec.description(settings) if spec.description else None
        server.add_bridge_tool(spec, description=description)
    return server


def fixed_client(client: ExoGraphClient) -> ClientFactory:
    """stdio: one long-lived client for every call."""

    @asynccontextmanager
    async def use(ctx: Context) -> AsyncIterator[ExoGraphClient]:
        yield client

    return use
