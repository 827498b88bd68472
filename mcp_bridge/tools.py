"""The MCP tools: each one REST call (two where the contract needs it) through ExoGraphClient.

Adding a tool (chat and research, when their endpoints land) is one function here:

    @bridge_tool(name="list_chat_sessions", annotations=READ_ONLY, guide=('"Show my chats"', "..."))
    async def list_chat_sessions(ctx: Context, graph_scope: ScopeArg = None) -> Annotated[CallToolResult, PageOut]:
        \"\"\"Description the agent chooses by.\"\"\"
        async with client_for(ctx) as exo:
            page = await exo.get("/api/v1/chat/sessions/", params={"graph_scope": graph_scope})
        return result(format_chat_sessions(page, ...), page)

`build_server` registers every tool of `TOOLS` and writes the initialize instructions from their guides.
"""

from __future__ import annotations

import asyncio
import base64
import inspect
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from functools import wraps
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, InputRequiredResult, TextContent, ToolAnnotations
from mcp.types import Tool as MCPTool
from pydantic import BaseModel, ConfigDict, Field

from mcp_bridge import formatting
from mcp_bridge.client import ExoGraphAPIError, ExoGraphClient, mask_secrets
from mcp_bridge.config import BridgeSettings

logger = logging.getLogger(__name__)

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
# upload_document: a write that adds (never removes); with the same operation_id a retry charges once.
WRITE_IDEMPOTENT = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)

# create_chat_session: a new session per call, nothing removed.
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
# send_chat_message (the web engine) and research read the open web; with operation_id a retry charges once.
WRITE_OPEN_WORLD = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=True
)

# The contract's order (the initialize instructions' table follows it).
CONTRACT_ORDER = (
    "search_entities",
    "get_world_graph",
    "list_graphs",
    "create_research_session",
    "get_research_status",
    "upload_document",
    "list_documents",
    "list_research_sessions",
    "create_chat_session",
    "list_chat_sessions",
    "send_chat_message",
)

MAX_LOCAL_FILE_BYTES = 64 * 1024 * 1024
TERMINAL_STATUSES = ("processed", "failed", "cancelled", "unchanged")

ClientFactory = Callable[[Context], AbstractAsyncContextManager[ExoGraphClient]]

Cursor = Annotated[
    str | None,
    Field(max_length=1000, description="Paging: the cursor a previous page's result named (omit for the first page)."),
]
ScopeArg = Annotated[
    Literal["world", "private"] | None,
    Field(
        description='"world" (shared world graph) or "private" (only your graphs); defaults to the configured scope.'
    ),
]
OperationId = Annotated[
    str | None,
    Field(
        default=None,
        min_length=1,
        max_length=200,
        pattern=r"^[\x21-\x7e]+$",
        description="Optional id of this operation (any printable text, ≤ 200 chars). Retrying with the same "
        "operation_id returns the first result and charges once; use a new one for a new upload.",
    ),
]


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class SearchOut(_Open):
    query: str
    count: int
    results: list[dict[str, Any]]


class WorldGraphOut(_Open):
    entity: dict[str, Any]
    related: list[dict[str, Any]]
    count: int


class PageOut(_Open):
    count: int
    next: str | None = None
    previous: str | None = None
    results: list[dict[str, Any]]


class CursorPageOut(_Open):
    next: str | None = None
    previous: str | None = None
    results: list[dict[str, Any]]


class ChatSessionOut(_Open):
    id: str
    title: str
    model_name: str
    reasoning_engine: str
    graph_scope: str


class ChatReplyOut(_Open):
    session_id: str
    message_id: str
    answer: str
    evidence: list[dict[str, Any]]
    credits_charged: int
    balance: int


class ResearchOut(_Open):
    id: str
    topic: str
    status: str


class DocumentOut(_Open):
    id: str
    filename: str
    status: str
    pages: int
    scope: str
    graph_id: str


@dataclass(frozen=True)
class Bridge:
    """What the tools need: how to get a REST client for this call, and the settings."""

    client_for: ClientFactory
    settings: BridgeSettings
    default_scope: Callable[[Context], str | None]


class ExoGraphMCPServer(MCPServer[Any]):
    """The SDK's server, refusing arguments a tool does not take (the SDK drops them silently: an upload with a
    misspelt or unsupported argument would run, and charge, without it) and saying so in each input schema."""

    def __init__(self, *, bridge: Bridge, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.bridge = bridge
        self.tool_arguments: dict[str, tuple[str, ...]] = {}

    def add_bridge_tool(self, spec: ToolSpec, *, description: str | None) -> None:
        self.add_tool(spec.fn, name=spec.name, title=spec.title, description=description, annotations=spec.annotations)
        self.tool_arguments[spec.name] = tool_argument_names(spec.fn)

    async def list_tools(self) -> list[MCPTool]:
        tools = await super().list_tools()
        return [
            tool.model_copy(update={"input_schema": {**tool.input_schema, "additionalProperties": False}})
            if tool.name in self.tool_arguments
            else tool
            for tool in tools
        ]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        accepted = self.tool_arguments.get(name)
        if accepted is not None:
            unknown = sorted(set(arguments) - set(accepted))
            if unknown:
                logger.info("mcp tool %s: refused unknown arguments %r", name, unknown)
                raise ToolError(
                    f"{name} does not take {_names(unknown)}, so nothing was done and nothing was charged. "
                    f"It takes: {', '.join(accepted)}. Check the spelling, or leave {_names(unknown)} out."
                )
        return await super().call_tool(name, arguments, context)


def tool_argument_names(fn: Callable[..., Any]) -> tuple[str, ...]:
    """The arguments a tool body takes (its parameters but the Context), in signature order."""
    return tuple(
        name
        for name, parameter in inspect.signature(fn).parameters.items()
        if parameter.annotation not in (Context, "Context")
    )


def _names(names: list[str]) -> str:
    quoted = [f"'{name[:60]}'" for name in names[:10]]
    more = f" and {len(names) - 10} more" if len(names) > 10 else ""
    return ("the argument " if len(names) == 1 else "the arguments ") + ", ".join(quoted) + more


def bridge_of(ctx: Context) -> Bridge:
    server = ctx.mcp_server
    if not isinstance(server, ExoGraphMCPServer):
        raise ToolError("This tool runs only inside the ExoGraph MCP server.")
    return server.bridge


def client_for(ctx: Context) -> AbstractAsyncContextManager[ExoGraphClient]:
    return bridge_of(ctx).client_for(ctx)


def effective_scope(ctx: Context, graph_scope: str | None) -> str:
    return graph_scope or bridge_of(ctx).default_scope(ctx) or "private"


def result(text: str, structured: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)


def _trim(structured: dict[str, Any], key: str, page: formatting.Bounded, more: str) -> dict[str, Any]:
    if not page.cut:
        return structured
    trimmed = dict(structured)
    trimmed[key] = list(structured.get(key) or [])[: page.shown]
    trimmed["truncated"] = {"shown": page.shown, "omitted": page.total - page.shown, "how_to_get_more": more}
    return trimmed


def tool_error(exc: ExoGraphAPIError) -> ToolError:
    text = formatting.format_error(
        status=exc.status, code=exc.code, message=exc.message, hint=exc.hint, retry_after=exc.retry_after
    )
    return ToolError(mask_secrets(text))


F = TypeVar("F", bound=Callable[..., Awaitable[CallToolResult]])


@dataclass(frozen=True)
class ToolSpec:
    fn: Callable[..., Awaitable[CallToolResult]]
    name: str
    title: str
    annotations: ToolAnnotations
    guide: tuple[str, str]  # (what the user says, when to use it) for the initialize instructions
    description: Callable[[BridgeSettings], str] | None = None


TOOLS: list[ToolSpec] = []


def bridge_tool(
    *,
    name: str,
    title: str,
    annotations: ToolAnnotations,
    guide: tuple[str, str],
    description: Callable[[BridgeSettings], str] | None = None,
) -> Callable[[F], F]:
    """Register a tool body: REST errors become tool errors keeping message and hint; crashes a short kind + next step."""

    def decorate(fn: F) -> F:
        @wraps(fn)
        async def run(*args: Any, **kwargs: Any) -> CallToolResult:
            started = time.monotonic()
            try:
                return await fn(*args, **kwargs)
            except ExoGraphAPIError as exc:
                logger.info("mcp tool %s: REST %s %s", name, exc.status, exc.code)
                raise tool_error(exc) from None
            except ToolError:
                raise
            except Exception as exc:
                logger.exception(
                    "mcp tool %s crashed after %.1fs (%s)", name, time.monotonic() - started, type(exc).__name__
                )
                raise ToolError(
                    f"Unexpected failure in the ExoGraph bridge ({type(exc).__name__}). Retry once; if it persists, "
                    "check the bridge's log (stderr) and report it."
                ) from None

        TOOLS.append(ToolSpec(run, name, title, annotations, guide, description))
        return fn

    return decorate


# --- Reads ---------------------------------------------------------------------------------


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
    bridge = bridge_of(ctx)
    async with client_for(ctx) as exo:
        response = await exo.graphs(graph_scope=graph_scope, limit=limit, offset=offset)
    page = formatting.format_graphs(
        response, scope=effective_scope(ctx, graph_scope), limit=bridge.settings.max_output_chars, offset=offset
    )
    return result(page.text, _trim(response, "results", page, f"Call list_graphs with offset={offset + page.shown}."))


@bridge_tool(
    name="list_documents",
    title="List documents",
    annotations=READ_ONLY,
    guide=('"List my documents"', "uploaded documents with their IDs, pages and processing status"),
)
async def list_documents(
    ctx: Context,
    graph_scope: ScopeArg = None,
    limit: Annotated[int, Field(ge=1, le=200, description="Documents per page (1-200).")] = 50,
    offset: Annotated[int, Field(ge=0, description="Skip this many documents (paging).")] = 0,
) -> Annotated[CallToolResult, PageOut]:
    """List your documents, newest first, filtered by graph scope.

    Returns each document's ID, file name, pages, creation date, scope and (while not yet indexed) its
    processing status. Paged: the result says when more exist and which offset gets them. Free.
    """
    bridge = bridge_of(ctx)
    async with client_for(ctx) as exo:
        response = await exo.documents(graph_scope=graph_scope, limit=limit, offset=offset)
    page = formatting.format_documents(
        response, scope=effective_scope(ctx, graph_scope), limit=bridge.settings.max_output_chars, offset=offset
    )
    return result(
        page.text, _trim(response, "results", page, f"Call list_documents with offset={offset + page.shown}.")
    )


# --- Writes --------------------------------------------------------------------------------


def _upload_description(settings: BridgeSettings) -> str:
    inline_mb = settings.max_inline_upload_bytes / (1024 * 1024)
    where = (
        "file_path is read on the machine where this MCP server runs and sent as base64."
        if settings.read_local_files
        else "file_path names a file on the ExoGraph server and works only where the server allows it "
        "(an upload root); from your machine, send file_content_base64 + filename."
    )
    return (
        "Upload a document (PDF or DOCX) to ExoGraph: it is parsed, its entities and relations are extracted "
        "and it becomes searchable (world scope also adds it to the shared world graph).\n\n"
        f"Give either file_path or file_content_base64 + filename. {where} An inline base64 upload may carry "
        f"a file of at most {inline_mb:.1f} MB (the request is capped at {settings.max_request_bytes // (1024 * 1024)} MB).\n\n"
        f"Waits up to {settings.upload_wait_seconds:g} s for processing, then reports 'Document has been processed "
        "and indexed.' or that it is still processing, with the document ID to check with list_documents.\n\n"
        "Costs 5 credits + 1 credit per page. Pass operation_id so a retried call charges once."
    )


def _read_local(file_path: str) -> tuple[str, str]:
    path = Path(file_path).expanduser()
    if not path.is_file():
        raise ToolError(
            f"No file at {file_path!r} on the machine where the ExoGraph MCP server runs. "
            "Give an absolute path to a .pdf or .docx file, or send file_content_base64 + filename."
        )
    size = path.stat().st_size
    if size > MAX_LOCAL_FILE_BYTES:
        raise ToolError(f"The file is {size:,} bytes; the largest upload is {MAX_LOCAL_FILE_BYTES:,} bytes. Split it.")
    return base64.b64encode(path.read_bytes()).decode("ascii"), path.name


async def _wait_processed(
    exo: ExoGraphClient, document: dict[str, Any], wait: float, poll: float
) -> tuple[dict[str, Any], float]:
    """Poll the document until it is processed (or failed) or `wait` seconds passed; backs off to 5 s between polls."""
    started = time.monotonic()
    current = document
    interval = max(0.2, poll)
    while current.get("status") not in TERMINAL_STATUSES:
        remaining = wait - (time.monotonic() - started)
        if remaining <= 0:
            break
        await asyncio.sleep(min(interval, remaining))
        fresh = await exo.document(document_id=str(document["id"]))
        current = {**document, **fresh}
        interval = min(interval * 2, 5.0)
    return current, time.monotonic() - started


@bridge_tool(
    name="upload_document",
    title="Upload a document",
    annotations=WRITE_IDEMPOTENT,
    guide=('"Upload document X"', "add a local PDF/DOCX to your graphs (costs 5 + 1 credit per page)"),
    description=_upload_description,
)
async def upload_document(
    ctx: Context,
    file_path: Annotated[
        str | None, Field(max_length=4096, description="Path of a .pdf or .docx file (see the description).")
    ] = None,
    file_content_base64: Annotated[
        str | None, Field(description="The file's bytes, base64-encoded (needs filename).")
    ] = None,
    filename: Annotated[
        str | None,
        Field(
            max_length=200, description="File name with extension (.pdf or .docx); required with file_content_base64."
        ),
    ] = None,
    graph_scope: ScopeArg = None,
    graph_id: Annotated[
        str | None,
        Field(
            max_length=64,
            description="Upload into this graph (an ID from list_graphs, of the upload's scope); "
            "default: your default graph of the scope.",
        ),
    ] = None,
    operation_id: OperationId = None,
) -> Annotated[CallToolResult, DocumentOut]:
    bridge = bridge_of(ctx)
    settings = bridge.settings
    given = [n for n, v in (("file_path", file_path), ("file_content_base64", file_content_base64)) if v]
    if len(given) != 1:
        raise ToolError(
            "Give exactly one of file_path or file_content_base64 (with filename)"
            + ("; got both." if len(given) == 2 else "; got neither.")
        )
    body: dict[str, Any] = {}
    if graph_scope:
        body["graph_scope"] = graph_scope
    if graph_id:
        body["graph_id"] = graph_id
    if file_content_base64:
        if not filename:
            raise ToolError('filename is required with file_content_base64, e.g. "report.pdf".')
        if len(file_content_base64) > settings.max_request_bytes:
            raise ToolError(
                f"file_content_base64 is {len(file_content_base64):,} characters; an inline upload may carry at most "
                f"{settings.max_inline_upload_bytes:,} bytes of file. Give file_path instead, or split the document."
            )
        body.update(file_content_base64=file_content_base64, filename=filename)
    elif settings.read_local_files:
        if file_path is None:  # unreachable: exactly one source was given
            raise ToolError("Give file_path or file_content_base64.")
        body["file_content_base64"], body["filename"] = _read_local(file_path)
        if filename:
            body["filename"] = filename
    else:
        body["file_path"] = file_path
        if filename:
            body["filename"] = filename
    async with client_for(ctx) as exo:
        document = await exo.document_upload(body=body, idempotency_key=operation_id)
        final, waited = await _wait_processed(exo, document, settings.upload_wait_seconds, settings.upload_poll_seconds)
    processed = final.get("status") in ("processed", "unchanged")
    text = formatting.format_upload(final, processed=processed, waited_seconds=waited)
    return result(text, final)


# --- Chat ----------------------------------------------------------------------------------

ChatModel = Annotated[
    Literal["snap", "ponder"],
    Field(description='"snap" (fast, 3 credits a message) or "ponder" (deep thinking, 10 credits).'),
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
    message sent in it costs credits (snap 3, ponder 10).
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
    bridge = bridge_of(ctx)
    scope = effective_scope(ctx, graph_scope)  # the REST rule: argument, else the connection's scope, else private
    async with client_for(ctx) as exo:
        response = await exo.chat_sessions(graph_scope=scope, limit=limit, cursor=cursor)
    page = formatting.format_chat_sessions(response, scope=scope, limit=bridge.settings.max_output_chars)
    return result(page.text, _trim(response, "results", page, "Ask for fewer sessions (limit)."))


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
    answer the evidence does not support is flagged. Costs 3 credits (snap) or 10 (ponder); a failed
    provider call is refunded. Pass operation_id so a retried call returns the first answer and charges once.
    """
    bridge = bridge_of(ctx)
    body: dict[str, Any] = {"message": message, "model": model, "reasoning_engine": reasoning_engine}
    for name, value in (("session_id", session_id), ("graph_scope", graph_scope), ("graph_id", graph_id)):
        if value:
            body[name] = value
    async with client_for(ctx) as exo:
        reply = await exo.chat_message_send(body=body, idempotency_key=operation_id)
    return result(formatting.format_chat_reply(reply, limit=bridge.settings.max_output_chars), reply)


# --- Research ------------------------------------------------------------------------------


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
    """Start an AI research session: it searches papers and articles on the web, reads them, adds what it
    learns to your graph and writes a cited report.

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
    bridge = bridge_of(ctx)
    scope = effective_scope(ctx, graph_scope)  # the REST rule: argument, else the connection's scope, else private
    async with client_for(ctx) as exo:
        response = await exo.research_sessions(graph_scope=scope, limit=limit, cursor=cursor)
    page = formatting.format_research_sessions(response, scope=scope, limit=bridge.settings.max_output_chars)
    return result(page.text, _trim(response, "results", page, "Ask for fewer sessions (limit)."))


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
per page; chat messages 3 (snap) or 10 (ponder); research 30-100 credits (reserved up front, what is not
spent is returned). Tell the user before spending. Pass an operation_id on paid calls so a retry is
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
