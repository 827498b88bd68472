"""Text of every tool result, formatted like the contract's examples. Pure functions, no I/O.

Each formatter takes the REST response (and what the tool knows: scope, query) and returns text.
`bounded` keeps a result under the output cap, cutting at item boundaries and saying what was left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

WORLD_MARK = "🌐"
PRIVATE_MARK = "🔒"
CONTEXT_CHARS = 300


def scope_mark(scope: str | None) -> str:
    return WORLD_MARK if scope == "world" else PRIVATE_MARK


def _date(value: Any) -> str:
    text = str(value or "")
    return text[:10] if len(text) >= 10 else text or "unknown"


def _clip(text: Any, limit: int = CONTEXT_CHARS) -> str:
    value = " ".join(str(text or "").split())
    return value if len(value) <= limit else value[: limit - 1].rstrip() + "…"


@dataclass(frozen=True)
class Bounded:
    """A formatted result: the text and how many items it shows (the rest were cut to fit the cap)."""

    text: str
    shown: int
    total: int

    @property
    def cut(self) -> bool:
        return self.shown < self.total


def bounded(header: str, items: Sequence[str], *, footer: str = "", limit: int, more: str) -> Bounded:
    """header + as many items as fit in `limit` characters + footer; a cut result names what was left out and `more`."""
    parts = [header]
    size = len(header) + len(footer) + 2
    shown = 0
    for item in items:
        room = limit - size - 400  # leave room for the "left out" note
        if len(item) + 2 > room and shown > 0:
            break
        if len(item) + 2 > room:  # a single item larger than the cap: cut the item itself
            item = item[: max(0, room - 1)] + "…"
        parts.append(item)
        size += len(item) + 2
        shown += 1
    if shown < len(items):
        parts.append(
            f"… {len(items) - shown} more item(s) not shown: this result is capped at {limit:,} characters. {more}"
        )
    if footer:
        parts.append(footer)
    return Bounded(text="\n\n".join(parts), shown=shown, total=len(items))


def format_search(
    response: Mapping[str, Any], *, scope: str | None, limit: int, graph_id: str | None = None
) -> Bounded:
    """search_entities: heading, 'Found N entities:', numbered bold names with id, graph, relevance, context."""
    query = str(response.get("query", ""))
    results = list(response.get("results") or [])
    mark = scope_mark(scope)
    where = f"{mark} {scope or 'private'}" + (f", graph `{graph_id}`" if graph_id else "")
    header = (
        f"🔍 Search Results for '{query}' ({where})\n\nFound {len(results)} entit{'y' if len(results) == 1 else 'ies'}:"
    )
    if not results:
        header += (
            "\n\nNothing matched. Try other words, the other scope (graph_scope='world' or 'private'), "
            "or upload a document / start research on the topic."
        )
    items = []
    for number, hit in enumerate(results, start=1):
        lines = [
            f"{number}. **{hit.get('name', '')}**",
            f"   ID: `{hit.get('id', '')}`",
            f"   Type: {hit.get('type', '')} | Graph: {mark} {hit.get('graph_name', '')} (`{hit.get('graph_id', '')}`)",
            f"   Relevance: {float(hit.get('relevance') or 0):.2f}",
        ]
        if hit.get("context"):
            lines.append(f"   Context: {_clip(hit['context'])}")
        items.append("\n".join(lines))
    footer = "API Cost: Free (search operations)"
    return bounded(
        header, items, footer=footer, limit=limit, more="Ask for fewer results (n_results) or a narrower query."
    )


def format_world_graph(response: Mapping[str, Any], *, limit: int) -> Bounded:
    """get_world_graph: heading with the entity, 'Found N related entities:', arrows with relationship, strength, sources."""
    entity = response.get("entity") or {}
    related = list(response.get("related") or [])
    header_lines = [f"{WORLD_MARK} World Graph: {entity.get('name', '')}", ""]
    header_lines.append(
        f"ID: `{entity.get('id', '')}` | Type: {entity.get('type', '')} | Mentions: {entity.get('mentions', 0)}"
    )
    if entity.get("description"):
        header_lines.append(f"Description: {_clip(entity['description'])}")
    header_lines += ["", f"Found {len(related)} related entit{'y' if len(related) == 1 else 'ies'}:"]
    items = []
    for item in related:
        arrow = "→" if item.get("direction", "outgoing") == "outgoing" else "←"
        strength = int(item.get("strength") or 0)
        lines = [
            f"{arrow} **{item.get('name', '')}**",
            f"   ID: `{item.get('id', '')}`",
            f"   Relationship: {item.get('relationship', '')}",
            f"   Strength: {strength} connection{'' if strength == 1 else 's'}",
        ]
        sources = item.get("sources") or []
        if sources:
            lines.append(f"   Sources: {', '.join(str(s) for s in sources)}")
        for evidence in item.get("evidence") or []:
            page = evidence.get("page")
            where = f"{evidence.get('document', '')}" + (f", p. {page}" if page else "")
            lines.append(f"   Evidence ({where}): {_clip(evidence.get('text', ''), 240)}")
        items.append("\n".join(lines))
    return bounded(
        "\n".join(header_lines),
        items,
        footer="API Cost: Free (graph operations)",
        limit=limit,
        more="Ask again without evidence, or explore one of the related entities by its ID.",
    )


def _paging_note(response: Mapping[str, Any], shown: int, noun: str, tool: str) -> str:
    count = response.get("count")
    if isinstance(count, int) and count > shown:
        return f"Showing {shown} of {count} {noun}. Call {tool} with offset={shown} for the next page."
    return ""


def format_graphs(response: Mapping[str, Any], *, scope: str | None, limit: int, offset: int = 0) -> Bounded:
    """list_graphs: '📊 Your Knowledge Graphs', 'Found N graph(s):', numbered with scope mark, ID, scope, created, type."""
    graphs = list(response.get("results") or [])
    total = response.get("count") if isinstance(response.get("count"), int) else len(graphs)
    header = f"📊 Your Knowledge Graphs ({scope_mark(scope)} {scope or 'private'})\n\nFound {total} graph(s):"
    items = []
    for number, graph in enumerate(graphs, start=offset + 1):
        counts = graph.get("counts") or {}
        lines = [
            f"{number}. {scope_mark(graph.get('scope'))} **{graph.get('name', '')}**",
            f"   ID: `{graph.get('id', '')}`",
            f"   Scope: {graph.get('scope', '')}",
            f"   Created: {_date(graph.get('created'))}",
            f"   Type: {graph.get('type', '')}",
        ]
        if counts:
            lines.append(
                f"   Contents: {counts.get('documents', 0)} documents, {counts.get('entities', 0)} entities, "
                f"{counts.get('relations', 0)} relations"
            )
        items.append("\n".join(lines))
    result = bounded(
        header, items, footer="API Cost: Free", limit=limit, more=f"Call list_graphs with offset={offset + 1}."
    )
    return _with_paging(result, response, offset, "graphs", "list_graphs")


def _with_paging(result: Bounded, response: Mapping[str, Any], offset: int, noun: str, tool: str) -> Bounded:
    note = _paging_note(response, offset + result.shown, noun, tool)
    if not note or result.cut:
        return result
    text, sep, footer = result.text.rpartition("\n\nAPI Cost:")
    return Bounded(text=f"{text}\n\n{note}{sep}{footer}", shown=result.shown, total=result.total)


def format_documents(response: Mapping[str, Any], *, scope: str | None, limit: int, offset: int = 0) -> Bounded:
    """list_documents: '📄 Documents (🌐 world)', numbered with scope mark, bold name, Document ID, pages, created."""
    documents = list(response.get("results") or [])
    header = f"📄 Documents ({scope_mark(scope)} {scope or 'private'})"
    if not documents:
        header += "\n\nNo documents yet. Upload a PDF or DOCX with upload_document."
    items = []
    for number, document in enumerate(documents, start=offset + 1):
        lines = [
            f"{number}. {scope_mark(document.get('scope'))} **{document.get('filename') or document.get('title', '')}**",
            f"   Document ID: `{document.get('id', '')}`",
            f"   Pages: {document.get('pages', 0)}",
            f"   Created: {_date(document.get('created'))}",
        ]
        status = document.get("status")
        if status and status != "processed":
            lines.append(f"   Status: {status} ({document.get('progress', 0)}%)")
        items.append("\n".join(lines))
    result = bounded(
        header, items, footer="API Cost: Free", limit=limit, more=f"Call list_documents with offset={offset + 1}."
    )
    return _with_paging(result, response, offset, "documents", "list_documents")


def format_upload(document: Mapping[str, Any], *, processed: bool, waited_seconds: float) -> str:
    """upload_document: '✅ Document Uploaded Successfully', file, id, pages, scope, graph, then the processing state."""
    status = str(document.get("status") or "")
    lines = [
        "✅ Document Uploaded Successfully" if status != "unchanged" else "✅ Document Already Uploaded",
        "",
        f"Filename: {document.get('filename', '')}",
        f"Document ID: `{document.get('id', '')}`",
        f"Pages: {document.get('pages', 0)}",
        f"Scope: {scope_mark(document.get('scope'))} {document.get('scope', '')}",
        f"Graph ID: `{document.get('graph_id', '')}`",
        "",
    ]
    failure = document.get("failure") or {}
    if status == "unchanged":
        lines.append("The same file was already in this graph; nothing was charged. It is indexed and searchable.")
    elif processed or status == "processed":
        lines.append("Document has been processed and indexed.")
    elif status in ("failed", "cancelled"):
        reason = failure.get("reason") if isinstance(failure, Mapping) else ""
        lines.append(f"Processing {status}: {reason or 'no reason given'}. The charge was refunded.")
    else:
        lines.append(
            f"Still processing ({status or 'pending'}, {document.get('progress', 0)}%) after {waited_seconds:.0f} s. "
            f"Check again with list_documents; document ID `{document.get('id', '')}`."
        )
    charged = document.get("credits_charged")
    if charged is not None:
        lines += ["", f"Usage: {charged} credits | Balance: {document.get('balance', '?')} credits"]
    return "\n".join(lines)


ERROR_LABELS = {
    400: "Invalid request",
    401: "Authentication failed",
    402: "Insufficient credits",
    403: "Not allowed",
    404: "Not found",
    409: "Conflict",
    413: "Too large",
    415: "Unsupported file",
    422: "Invalid request",
    429: "Rate limit reached",
    503: "Service unavailable",
}


def format_error(*, status: int, code: str, message: str, hint: str = "", retry_after: int | None = None) -> str:
    """The text of a tool error: a label for the kind, the REST message, when to retry, the hint."""
    if status == 0:
        label = {"timeout": "Timeout", "connection_error": "Connection failed"}.get(code, "Request failed")
    else:
        label = ERROR_LABELS.get(status, "Server error" if status >= 500 else "Request failed")
    text = f"{label}: {message}"
    if status == 429 and retry_after is not None:
        text += f" Retry after {retry_after} s."
    if hint:
        text += f" {hint}"
    return f"{text} (HTTP {status}, {code})" if status else f"{text} ({code})"
