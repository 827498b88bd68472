"""Texts of the research tools: create_research_session, get_research_status, list_research_sessions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_bridge.formatting.base import (
    Bounded,
    _cap_text,
    _date,
    _scope_label,
    _when,
    bounded,
    cursor_footer,
    scope_mark,
)

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
    footer = cursor_footer(response, "sessions", "list_research_sessions")
    return bounded(header, items, footer=footer, limit=limit, more="Ask for fewer sessions (limit).")
