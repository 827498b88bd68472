"""The document tools: list_documents, and upload_document (a file from here or inline, waited on)."""

from __future__ import annotations

import asyncio
import base64
import time
from functools import partial
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult
from pydantic import Field

from mcp_bridge import formatting
from mcp_bridge.client import ExoGraphClient
from mcp_bridge.config import BridgeSettings
from mcp_bridge.tools.base import (
    READ_ONLY,
    WRITE_IDEMPOTENT,
    DocumentOut,
    OperationId,
    PageOut,
    ScopeArg,
    bridge_of,
    bridge_tool,
    client_for,
    offset_page,
    result,
)

MAX_LOCAL_FILE_BYTES = 64 * 1024 * 1024
TERMINAL_STATUSES = ("processed", "failed", "cancelled", "unchanged")


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
    return await offset_page(
        ctx,
        tool="list_documents",
        graph_scope=graph_scope,
        offset=offset,
        fetch=lambda exo: exo.documents(graph_scope=graph_scope, limit=limit, offset=offset),
        format_page=partial(formatting.format_documents, upload_types=bridge_of(ctx).settings.upload_types),
    )


def _upload_description(settings: BridgeSettings) -> str:
    inline_mb = settings.max_inline_upload_bytes / (1024 * 1024)
    where = (
        "file_path is read on the machine where this MCP server runs and sent as base64."
        if settings.read_local_files
        else "file_path names a file on the ExoGraph server and works only where the server allows it "
        "(an upload root); from your machine, send file_content_base64 + filename."
    )
    return (
        f"Upload a document ({settings.upload_types}) to ExoGraph: it is parsed, its entities and relations are extracted "
        "and it becomes searchable (world scope also adds it to the shared world graph).\n\n"
        f"Give either file_path or file_content_base64 + filename. {where} An inline base64 upload may carry "
        f"a file of at most {inline_mb:.1f} MB (the request is capped at {settings.max_request_bytes // (1024 * 1024)} MB).\n\n"
        f"Waits up to {settings.upload_wait_seconds:g} s for processing, then reports 'Document has been processed "
        "and indexed.' or that it is still processing, with the document ID to check with list_documents.\n\n"
        "Costs 5 credits + 1 credit per page. Pass operation_id so a retried call charges once."
    )


def _read_local(file_path: str, upload_types: str) -> tuple[str, str]:
    path = Path(file_path).expanduser()
    if not path.is_file():
        raise ToolError(
            f"No file at {file_path!r} on the machine where the ExoGraph MCP server runs. "
            f"Give an absolute path to a file ({upload_types}), or send file_content_base64 + filename."
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
    guide=('"Upload document X"', "add a local document to your graphs (costs 5 + 1 credit per page)"),
    description=_upload_description,
)
async def upload_document(
    ctx: Context,
    file_path: Annotated[
        str | None,
        Field(max_length=4096, description="Path of the file, of a kind the description names (see the description)."),
    ] = None,
    file_content_base64: Annotated[
        str | None, Field(description="The file's bytes, base64-encoded (needs filename).")
    ] = None,
    filename: Annotated[
        str | None,
        Field(
            max_length=200,
            description="File name with its extension, of a kind the description names; "
            "required with file_content_base64.",
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
        body["file_content_base64"], body["filename"] = _read_local(file_path, settings.upload_types)
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
