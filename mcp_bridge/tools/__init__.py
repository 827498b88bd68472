"""The MCP tools: each one REST call (two where the contract needs it) through ExoGraphClient.

`base` holds what every tool shares (annotations, argument and output types, `bridge_tool`, the list shapes); the
tools live by what they touch (`graphs`, `documents`, `chat`, `research`); `server` builds the MCP server.
Adding a tool is one function in the module of its kind:

    @bridge_tool(name="list_chat_sessions", annotations=READ_ONLY, guide=('"Show my chats"', "..."))
    async def list_chat_sessions(ctx: Context, graph_scope: ScopeArg = None) -> Annotated[CallToolResult, PageOut]:
        \"\"\"Description the agent chooses by.\"\"\"
        async with client_for(ctx) as exo:
            page = await exo.get("/api/v1/chat/sessions/", params={"graph_scope": graph_scope})
        return result(format_chat_sessions(page, ...), page)

`build_server` registers every tool of `TOOLS` and writes the initialize instructions from their guides.
"""

# Importing the tool modules registers their tools in TOOLS, in this order (the order tools/list answers in).
# isort: off
from mcp_bridge.tools import graphs  # noqa: F401
from mcp_bridge.tools import documents  # noqa: F401
from mcp_bridge.tools import chat  # noqa: F401
from mcp_bridge.tools import research  # noqa: F401

# isort: on
from mcp_bridge.tools.base import CONTRACT_ORDER, TOOLS, Bridge, ExoGraphMCPServer, ToolSpec, bridge_tool
from mcp_bridge.tools.server import build_server, fixed_client, instructions_for

__all__ = [
    "CONTRACT_ORDER",
    "TOOLS",
    "Bridge",
    "ExoGraphMCPServer",
    "ToolSpec",
    "bridge_tool",
    "build_server",
    "fixed_client",
    "instructions_for",
]
