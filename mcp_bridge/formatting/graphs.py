"""Texts of the graph and document tools: search_entities, get_world_graph, list_graphs, list_documents, upload_document."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_bridge.config import DEFAULT_UPLOAD_TYPES
from mcp_bridge.formatting.base import WORLD_MARK, Bounded, _clip, _date, _with_paging, bounded, scope_mark


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


def format_documents(
    response: Mapping[str, Any],
    *,
    scope: str | None,
    limit: int,
    offset: int = 0,
    upload_types: str = DEFAULT_UPLOAD_TYPES,
) -> Bounded:
    """list_documents: '📄 Documents (🌐 world)', numbered with scope mark, bold name, Document ID, pages, created;
    an empty list says which files upload_document takes (`upload_types`, the bridge's settings)."""
    documents = list(response.get("results") or [])
    header = f"📄 Documents ({scope_mark(scope)} {scope or 'private'})"
    if not documents:
        header += f"\n\nNo documents yet. Upload a file ({upload_types}) with upload_document."
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
