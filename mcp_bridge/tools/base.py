"""What every tool shares: annotations, argument and output types, the server refusing unknown arguments,
`bridge_tool` (the registry and the error wrapping) and the two list shapes (paged by offset or by cursor)."""

from __future__ import annotations

import difflib
import inspect
import logging
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from functools import wraps
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, InputRequiredResult, TextContent, ToolAnnotations
from mcp.types import Tool as MCPTool
from pydantic import BaseModel, ConfigDict, Field, ValidationError

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
                near = _nearest(unknown[0], accepted)
                raise ToolError(
                    f"{name} does not take {_names(unknown)}, so nothing was done and nothing was charged. "
                    f"It takes: {', '.join(accepted)}. "
                    + (f"Did you mean '{near}'? " if near else "")
                    + f"Check the spelling, or leave {_names(unknown)} out."
                )
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            # The SDK's refusal of arguments its input schema rejects is pydantic's report (a ToolError caused by
            # the ValidationError); a crash is UnexpectedToolError and keeps the SDK's message.
            if type(exc) is ToolError and isinstance(exc.__cause__, ValidationError) and accepted is not None:
                logger.info("mcp tool %s: refused invalid arguments", name)
                raise ToolError(argument_errors_text(name, exc.__cause__)) from exc.__cause__
            raise


def argument_errors_text(tool: str, error: ValidationError) -> str:
    """Which arguments are wrong and what each must be, in words (pydantic's own message for the rule, the value
    sent cut to 60 characters), and that nothing happened: 'create_research_session: 'query' String should have
    at least 3 characters (got 'x'), so nothing was done and nothing was charged.'"""
    problems = []
    for item in error.errors(include_url=False)[:5]:
        argument = ".".join(str(part) for part in item.get("loc", ())) or "arguments"
        if item.get("type") == "missing":
            problems.append(f"'{argument[:60]}' is required")
            continue
        sent = repr(item.get("input"))
        sent = sent if len(sent) <= 60 else sent[:57] + "..."
        problems.append(f"'{argument[:60]}': {str(item.get('msg', 'invalid')).rstrip('.')} (got {sent})")
    return (
        f"{tool}: {'; '.join(problems)}, so nothing was done and nothing was charged. "
        "Correct the argument and call again (the tool's input schema lists what each one takes)."
    )


def tool_argument_names(fn: Callable[..., Any]) -> tuple[str, ...]:
    """The arguments a tool body takes (its parameters but the Context), in signature order."""
    return tuple(
        name
        for name, parameter in inspect.signature(fn).parameters.items()
        if parameter.annotation not in (Context, "Context")
    )


def _nearest(name: str, accepted: tuple[str, ...]) -> str | None:
    """The accepted argument a misspelt one most likely meant (as the REST API's unknown_field hint names it)."""
    name = name.lower()[:60]
    near = [arg for arg in accepted if name in arg or arg in name]
    near = near or difflib.get_close_matches(name, accepted, n=1, cutoff=0.5)
    return near[0] if near else None


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


async def offset_page(
    ctx: Context,
    *,
    tool: str,
    graph_scope: str | None,
    offset: int,
    fetch: Callable[[ExoGraphClient], Awaitable[dict[str, Any]]],
    format_page: Callable[..., formatting.Bounded],
) -> CallToolResult:
    """A free list paged by offset (list_graphs, list_documents): one REST call, its text under the cap."""
    bridge = bridge_of(ctx)
    async with client_for(ctx) as exo:
        response = await fetch(exo)
    page = format_page(
        response, scope=effective_scope(ctx, graph_scope), limit=bridge.settings.max_output_chars, offset=offset
    )
    return result(page.text, _trim(response, "results", page, f"Call {tool} with offset={offset + page.shown}."))


async def cursor_page(
    ctx: Context,
    *,
    graph_scope: str | None,
    fetch: Callable[[ExoGraphClient, str], Awaitable[dict[str, Any]]],
    format_page: Callable[..., formatting.Bounded],
) -> CallToolResult:
    """A free list of sessions paged by cursor (list_chat_sessions, list_research_sessions) in the effective scope."""
    bridge = bridge_of(ctx)
    scope = effective_scope(ctx, graph_scope)  # the REST rule: argument, else the connection's scope, else private
    async with client_for(ctx) as exo:
        response = await fetch(exo, scope)
    page = format_page(response, scope=scope, limit=bridge.settings.max_output_chars)
    return result(page.text, _trim(response, "results", page, "Ask for fewer sessions (limit)."))
