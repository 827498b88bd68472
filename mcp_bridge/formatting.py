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


def _when(value: Any) -> str:
    """An ISO timestamp as 'YYYY-MM-DD HH:MM' (UTC, as the API gives it)."""
    text = str(value or "")
    return f"{text[:10]} {text[11:16]}" if len(text) >= 16 and text[10] in "T " else text or "unknown"


def cursor_of(url: Any) -> str | None:
    """The `cursor` query parameter of a REST next/previous link (what the list tools take back)."""
    if not url:
        return None
    from urllib.parse import parse_qs, urlsplit

    values = parse_qs(urlsplit(str(url)).query).get("cursor")
    return values[0] if values else None


def _scope_label(scope: str | None) -> str:
    return f"{scope_mark(scope)} {scope}" if scope else "all scopes"


def _cap_text(text: str, limit: int, more: str) -> str:
    """A single text block cut to `limit` characters, saying so (for the rare answer longer than the cap)."""
    if len(text) <= limit:
        return text
    note = f"\n\n… cut: this result is capped at {limit:,} characters ({len(text) - limit + 200:,} left out). {more}"
    return text[: max(0, limit - len(note))].rstrip() + note


# --- chat -----------------------------------------------------------------------------


def _chat_session_lines(session: Mapping[str, Any]) -> list[str]:
    lines = [
        f"Session ID: `{session.get('id', '')}`",
        f"Scope: {scope_mark(session.get('graph_scope'))} {session.get('graph_scope', '')}",
        f"Model: {session.get('model_name', '')}",
        f"Engine: {session.get('reasoning_engine', '')}",
    ]
    if session.get("graph_id"):
        lines.append(f"Graph ID: `{session['graph_id']}`")
    return lines


def format_chat_session_created(session: Mapping[str, Any]) -> str:
    """create_chat_session: '💬 Chat Session Created', title, session id, scope, model, engine."""
    title = session.get("title") or "(untitled: named after its first message)"
    lines = ["💬 Chat Session Created", "", f"Title: {title}", *_chat_session_lines(session), ""]
    lines.append(f'Send messages with send_chat_message(session_id="{session.get("id", "")}", message=…).')
    lines += ["", "API Cost: Free (session creation)"]
    return "\n".join(lines)


def format_chat_sessions(response: Mapping[str, Any], *, scope: str | None, limit: int) -> Bounded:
    """list_chat_sessions: '💬 Chat Sessions (🌐 world)', numbered bold titles with id, model, engine, updated."""
    sessions = list(response.get("results") or [])
    header = f"💬 Chat Sessions ({_scope_label(scope)})"
    if not sessions:
        header += "\n\nNo chat sessions yet. Start one with create_chat_session or send_chat_message."
    items = []
    for number, session in enumerate(sessions, start=1):
        lines = [
            f"{number}. **{session.get('title') or '(untitled)'}**",
            f"   Session ID: `{session.get('id', '')}`",
            f"   Scope: {scope_mark(session.get('graph_scope'))} {session.get('graph_scope', '')}",
            f"   Model: {session.get('model_name', '')}",
            f"   Engine: {session.get('reasoning_engine', '')}",
            f"   Updated: {_date(session.get('updated'))}",
        ]
        items.append("\n".join(lines))
    cursor = cursor_of(response.get("next"))
    footer = "API Cost: Free"
    if cursor:
        footer = f'More sessions exist: call list_chat_sessions with cursor="{cursor}".\n\n{footer}'
    more = "Ask for fewer sessions (limit), then page on with cursor."
    return bounded(header, items, footer=footer, limit=limit, more=more)


ORIGIN_MARKS = {"world": WORLD_MARK, "private": PRIVATE_MARK, "web": "🔗"}


def _evidence_line(item: Mapping[str, Any]) -> str:
    mark = ORIGIN_MARKS.get(str(item.get("origin") or ""), "•")
    where = str(item.get("source") or item.get("kind") or "source")
    if item.get("page"):
        where += f", p. {item['page']}"
    if item.get("url"):
        where += f" — {item['url']}"
    if item.get("document_id"):
        where += f" (document `{item['document_id']}`)"
    return f"[{item.get('n', '?')}] {mark} {where}"


CONSIDERED_SHOWN = 8


def format_chat_reply(response: Mapping[str, Any], *, limit: int) -> str:
    """send_chat_message: '💬 Chat Response', the answer, its short answer, its cited sources (each with what it
    says), whether it is grounded (or not in the documents, and refunded), the evidence considered but not cited
    (briefly), the session, 'Usage: … | Balance: …'."""
    answer = str(response.get("answer") or "").strip() or "(the model gave no answer)"
    lines = ["💬 Chat Response", "", answer]
    short = str(response.get("short_answer") or "").strip()
    if short and response.get("answered") is not False:
        lines += ["", f"Short answer: {short}"]
    evidence = [item for item in response.get("evidence") or [] if isinstance(item, Mapping)]
    if evidence:
        lines += ["", "Sources:"]
        for item in evidence:
            lines.append(_evidence_line(item))
            said = _clip(item.get("text"), 200)
            if said and said != "…":
                lines.append(f"    {item.get('kind') or 'passage'}: “{said}”")
    citations = response.get("citations") or {}
    unsupported = citations.get("unsupported") if isinstance(citations, Mapping) else None
    usage = response.get("usage") if isinstance(response.get("usage"), Mapping) else {}
    if response.get("answered") is False:
        refunded = int(usage.get("credits_refunded") or 0) if usage else 0
        lines += [
            "",
            "📭 Not in your documents: the evidence does not answer this question (not grounded)"
            + (f"; not charged ({refunded} credits refunded)." if refunded else "."),
        ]
    elif response.get("grounded") is False:
        score = float(response.get("support_score") or 0)
        lines += [
            "",
            f"⚠️ Not fully grounded (support {score:.2f}): "
            + (f"{len(unsupported)} statement(s) lack a supporting source. " if unsupported else "")
            + "Treat uncited statements with care.",
        ]
    elif response.get("grounded") is True:
        lines += ["", f"✅ Grounded in the cited sources (support {float(response.get('support_score') or 0):.2f})."]
    considered = [
        item
        for item in response.get("considered") or []
        if isinstance(item, Mapping) and not item.get("cited") and _clip(item.get("text"), 80) not in ("", "…")
    ]
    if considered:
        shown = [
            f"[{item.get('n', '?')}] {item.get('kind') or 'passage'}: {_clip(item.get('text'), 80)}"
            for item in considered[:CONSIDERED_SHOWN]
        ]
        more = len(considered) - len(shown)
        lines += ["", "Also considered (not cited):", *(f"  {line}" for line in shown)]
        if more > 0:
            lines.append(f"  … and {more} more in the structured result (considered).")
    lines += [
        "",
        f"Session ID: `{response.get('session_id', '')}` | Model: {response.get('model', '')} | "
        f"Engine: {response.get('reasoning_engine', '')} | Scope: {scope_mark(response.get('graph_scope'))} "
        f"{response.get('graph_scope', '')}",
        f"Usage: {response.get('credits_charged', 0)} credits | Balance: {response.get('balance', '?')} credits",
    ]
    return _cap_text("\n".join(lines), limit, "The full answer and evidence are in the structured result of this call.")


# --- research -------------------------------------------------------------------------

STATUS_MARKS = {
    "pending": "⏸️",
    "queued": "⏸️",
    "running": "🔄",
    "completed": "✅",
    "failed": "❌",
    "cancelled": "⏹️",
}


def _graph_line(session: Mapping[str, Any]) -> str:
    scope = session.get("scope") or session.get("graph_scope")
    line = f"Scope: {scope_mark(scope)} {scope or ''}"
    if session.get("graph_id"):
        line += f" | Graph: {session.get('graph_name') or ''} (`{session['graph_id']}`)"
    return line


def format_research_created(session: Mapping[str, Any]) -> str:
    """create_research_session: '🔬 Research Session Created', topic, session id, status, then what to do next."""
    lines = [
        "🔬 Research Session Created",
        "",
        f"Topic: {session.get('topic', '')}",
        f"Session ID: `{session.get('id', '')}`",
        f"Status: {session.get('status', '')}",
        _graph_line(session),
        f"Model: {session.get('model', '')}",
        "",
        "The research agent will begin investigating this topic.",
        "Use get_research_status to check progress.",
        "",
        f"Usage: {session.get('credits_held', 0)} credits held (what is not spent is returned) | "
        f"Balance: {session.get('balance', '?')} credits",
    ]
    return "\n".join(lines)


def _report_lines(report: Mapping[str, Any]) -> list[str]:
    lines: list[str] = []
    if report.get("summary"):
        lines += ["", str(report["summary"]).strip()]
    findings = [f for f in report.get("findings") or [] if isinstance(f, Mapping)]
    if findings:
        lines += ["", "Key findings:"]
        asked = None
        for number, finding in enumerate(findings, start=1):
            if finding.get("sub_question") and finding["sub_question"] != asked:  # grouped by sub-question
                asked = finding["sub_question"]
                lines.append(f"» {str(asked).strip()}")
            cited = "".join(f"[{c}]" for c in finding.get("citations") or [])
            lines.append(f"{number}. {str(finding.get('text', '')).strip()}" + (f" {cited}" if cited else ""))
    questions = [str(q) for q in report.get("open_questions") or []]
    if questions:
        lines += ["", "Open questions:", *(f"- {q}" for q in questions)]
    return lines


def _source_item(source: Mapping[str, Any]) -> str:
    kind = str(source.get("kind") or "")
    mark = {"paper": "📄", "article": "📰", "local": "📁"}.get(kind, "•")
    line = f"[{source.get('number', '?')}] {mark} {source.get('title') or source.get('url') or 'untitled'}"
    details = ", ".join(
        part for part in (kind, _date(source.get("published")) if source.get("published") else "") if part
    )
    if details:
        line += f" ({details})"
    if source.get("url"):
        line += f" — {source['url']}"
    if source.get("document_id"):
        line += f" — Document ID: `{source['document_id']}`"
    return line


def format_research_status(session: Mapping[str, Any], *, limit: int) -> Bounded:
    """get_research_status: '📋 Research Session Status', topic, status, times, progress; the report when done."""
    status = str(session.get("status") or "")
    progress = session.get("progress") or {}
    lines = [
        "📋 Research Session Status",
        "",
        f"Topic: {session.get('topic', '')}",
        f"Session ID: `{session.get('id', '')}`",
        f"Status: {status}",
        f"Created: {_when(session.get('created'))}",
    ]
    if session.get("completed"):
        lines.append(f"Completed: {_when(session.get('completed'))}")
    lines.append(_graph_line(session))
    lines.append(f"Credits: {session.get('credits_spent', 0)} spent of {session.get('credits_held', 0)} held")
    report = session.get("report")
    papers, articles = int(session.get("papers") or 0), int(session.get("articles") or 0)
    if status == "completed":
        lines += ["", "✅ Research Complete!"]
        summary = str(report.get("summary") or "") if isinstance(report, Mapping) else ""
        if not summary.startswith("Found "):  # the report's summary usually says it already
            lines += [
                "",
                f"Found {papers} academic paper{'' if papers == 1 else 's'} and {articles} technical "
                f"article{'' if articles == 1 else 's'} on {session.get('topic', 'this topic')}.",
            ]
        if isinstance(report, Mapping):
            lines += _report_lines(report)
    elif status in ("failed", "cancelled"):
        reason = session.get("error") or session.get("note") or "no reason given"
        lines += ["", f"{STATUS_MARKS[status]} Research {status}: {reason}"]
        lines.append("Unspent credits were returned. Start a new session with create_research_session.")
    else:
        step = progress.get("step") if isinstance(progress, Mapping) else ""
        percent = progress.get("percent", 0) if isinstance(progress, Mapping) else 0
        found = progress.get("sources_found", 0) if isinstance(progress, Mapping) else 0
        read = progress.get("sources_read", 0) if isinstance(progress, Mapping) else 0
        lines += [
            "",
            f"{STATUS_MARKS.get(status, '🔄')} In progress: {step or status or 'starting'} ({percent}%), "
            f"{found} sources found, {read} read.",
            "Check again with get_research_status in a minute.",
        ]
    if session.get("note"):
        lines += ["", f"Note: {session['note']}"]
    sources = []
    if isinstance(report, Mapping):
        sources = [_source_item(s) for s in report.get("sources") or [] if isinstance(s, Mapping)]
    header = "\n".join(lines)
    if sources:
        header += "\n\nSources:"
    more = "The full report is in the structured result of this call (and GET /api/v1/research/{id}/export/)."
    text = _cap_text(header, limit - 600, more) if len(header) > limit - 600 else header
    return bounded(text, sources, footer="API Cost: Free (status check)", limit=limit, more=more)


def format_research_sessions(response: Mapping[str, Any], *, scope: str | None, limit: int) -> Bounded:
    """list_research_sessions: '📊 Research Sessions (🌐 world)', numbered status mark + bold topic, id, status, created."""
    sessions = list(response.get("results") or [])
    header = f"📊 Research Sessions ({_scope_label(scope)})"
    if not sessions:
        header += "\n\nNo research sessions yet. Start one with create_research_session."
    items = []
    for number, session in enumerate(sessions, start=1):
        status = str(session.get("status") or "")
        lines = [
            f"{number}. {STATUS_MARKS.get(status, '•')} **{session.get('topic', '')}**",
            f"   Session ID: `{session.get('id', '')}`",
            f"   Status: {status}",
            f"   Created: {_date(session.get('created'))}",
        ]
        items.append("\n".join(lines))
    cursor = cursor_of(response.get("next"))
    footer = "API Cost: Free"
    if cursor:
        footer = f'More sessions exist: call list_research_sessions with cursor="{cursor}".\n\n{footer}'
    return bounded(header, items, footer=footer, limit=limit, more="Ask for fewer sessions (limit).")


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
    """The text of a tool error: a label for the kind (once), the REST message, when to retry, the hint."""
    if status == 0:
        label = {"timeout": "Timeout", "connection_error": "Connection failed"}.get(code, "Request failed")
    else:
        label = ERROR_LABELS.get(status, "Server error" if status >= 500 else "Request failed")
    # The label names the kind unless the message already opens with it ("Rate limit reached: 2 requests…").
    text = message if message.casefold().startswith(label.casefold()) else f"{label}: {message}"
    if status == 429 and retry_after is not None:
        text += f" Retry after {retry_after} s."
    if hint:
        text += f" {hint}"
    return f"{text} (HTTP {status}, {code})" if status else f"{text} ({code})"
