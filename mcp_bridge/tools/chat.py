"""The chat tools: create_chat_session, list_chat_sessions, send_chat_message."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import Field

from mcp_bridge import formatting
from mcp_bridge.tools.base import (
    READ_ONLY,
    WRITE,
    WRITE_OPEN_WORLD,
    ChatReplyOut,
    ChatSessionOut,
    Cursor,
    CursorPageOut,
    OperationId,
    ScopeArg,
    bridge_of,
    bridge_tool,
    client_for,
    cursor_page,
    result,
)

ChatModel = Annotated[
    Literal["snap", "ponder"],
    Field(
        description='"snap" (fast, 3 credits a message) or "ponder" (deep thinking, 10 credits; 3 on the offline reader, which answers it as snap).'
    ),
]


@bridge_tool(
    name="create_chat_session",
    title="Create a chat session",
    annotations=WRITE,
    guide=('"Create a chat session"', "a new multi-turn conversation grounded in your graphs (free)"),
)
async def create_chat_session(
    ctx: Context,
    title: Annotated[
        str | None, Field(max_length=200, description="Session title; named after the first message if omitted.")
    ] = None,
    model_name: ChatModel = "snap",
    reasoning_engine: Annotated[
        Literal["rag", "graph", "web"],
        Field(description='"rag" (passages), "graph" (entities and relations) or "web" (web search).'),
    ] = "rag",
    graph_scope: ScopeArg = None,
) -> Annotated[CallToolResult, ChatSessionOut]:
    """Create a new ExoGraph chat session for a multi-turn conversation.

    Returns the session ID (pass it to send_chat_message), its scope, model and engine. Free; each
    message sent in it costs credits (snap 3, ponder 10; ponder 3 on the offline reader).
    """
    body: dict[str, Any] = {"model_name": model_name, "reasoning_engine": reasoning_engine}
    if title:
        body["title"] = title
    if graph_scope:
        body["graph_scope"] = graph_scope
    async with client_for(ctx) as exo:
        session = await exo.chat_session_create(body=body)
    return result(formatting.format_chat_session_created(session), session)


@bridge_tool(
    name="list_chat_sessions",
    title="List chat sessions",
    annotations=READ_ONLY,
    guide=('"Show my chats"', "your chat sessions, most recently updated first"),
)
async def list_chat_sessions(
    ctx: Context,
    graph_scope: ScopeArg = None,
    limit: Annotated[int, Field(ge=1, le=200, description="Sessions per page (1-200).")] = 20,
    cursor: Cursor = None,
) -> Annotated[CallToolResult, CursorPageOut]:
    """List your chat sessions, most recently updated first, filtered by graph scope.

    Returns each session's ID, title, scope, model, engine and last update. Paged: when more exist
    the result names the cursor for the next page. Free.
    """
    return await cursor_page(
        ctx,
        graph_scope=graph_scope,
        fetch=lambda exo, scope: exo.chat_sessions(graph_scope=scope, limit=limit, cursor=cursor),
        format_page=formatting.format_chat_sessions,
    )


@bridge_tool(
    name="send_chat_message",
    title="Send a chat message",
    annotations=WRITE_OPEN_WORLD,
    guide=('"Send message to ExoGraph"', "ask ExoGraph a question; answers cite your documents (snap 3, ponder 10)"),
)
async def send_chat_message(
    ctx: Context,
    message: Annotated[str, Field(min_length=1, max_length=100_000, description="The message content to send.")],
    session_id: Annotated[
        str | None,
        Field(max_length=64, description="Continue this session (an ID from create/list_chat_sessions); omit for new."),
    ] = None,
    model: ChatModel = "snap",
    reasoning_engine: Annotated[
        Literal["rag", "graph", "web"],
        Field(description='"graph" (entities and relations), "rag" (passages) or "web" (searches the web).'),
    ] = "graph",
    graph_scope: ScopeArg = None,
    graph_id: Annotated[str | None, Field(max_length=64, description="Answer from this graph only.")] = None,
    operation_id: OperationId = None,
) -> Annotated[CallToolResult, ChatReplyOut]:
    """Send a message to ExoGraph and get an answer grounded in your knowledge graphs, with numbered sources.

    Creates a new session when session_id is omitted (the result gives its ID). The answer cites its
    evidence as [n]; the sources list names the documents (or web pages) behind each number, and an
    answer the evidence does not support is flagged. Costs 3 credits (snap) or 10 (ponder; 3 on the offline
    reader, which answers it as snap); a failed provider call is refunded. Pass operation_id so a retried call returns the first answer and charges once.
    """
    bridge = bridge_of(ctx)
    body: dict[str, Any] = {"message": message, "model": model, "reasoning_engine": reasoning_engine}
    for name, value in (("session_id", session_id), ("graph_scope", graph_scope), ("graph_id", graph_id)):
        if value:
            body[name] = value
    async with client_for(ctx) as exo:
        reply = await exo.chat_message_send(body=body, idempotency_key=operation_id)
    return result(formatting.format_chat_reply(reply, limit=bridge.settings.max_output_chars), reply)
