"""A finished report as Markdown or DOCX (python-docx): summary, findings with [n] citations, sources."""

from __future__ import annotations

import io
import re
from typing import Any

from exograph.core.errors import Conflict
from research.models import ResearchSession, ResearchStatus

_UNSAFE = re.compile(r"[^\w\- ]+")


def _report(session: ResearchSession) -> dict[str, Any]:
    if session.status != ResearchStatus.COMPLETED or not session.report:
        raise Conflict(
            f"This session is {session.status}; only a completed session's report can be exported.",
            code="research_not_completed",
            hint="Wait until the session is completed (GET /api/v1/research/{id}/).",
        )
    return dict(session.report)


def research_export_filename(session: ResearchSession, extension: str) -> str:
    stem = _UNSAFE.sub("", session.topic)[:60].strip().replace(" ", "-") or "research"
    return f"{stem}.{extension}"


def _cites(numbers: list[int]) -> str:
    return "".join(f"[{n}]" for n in numbers)


def research_export_markdown(*, session: ResearchSession) -> str:
    """The report as Markdown; citations link to the numbered sources. Raises Conflict (not completed)."""
    report = _report(session)
    lines = [f"# {session.topic}", "", report.get("summary") or "", "", "## Key findings", ""]
    for finding in report.get("findings") or []:
        links = "".join(f"[[{n}]](#source-{n})" for n in finding.get("citations") or [])
        lines.append(f"- {finding['text']} {links}".rstrip())
    if report.get("open_questions"):
        lines += ["", "## Open questions", ""]
        lines += [f"- {question}" for question in report["open_questions"]]
    lines += ["", "## Sources", ""]
    for source in report.get("sources") or []:
        title = source["title"].replace("[", "(").replace("]", ")")
        head = f"[{title}]({source['url']})" if source.get("url") else title
        date = f", {source['published']}" if source.get("published") else ""
        lines.append(f'<a id="source-{source["number"]}"></a>{source["number"]}. {head} ({source["kind"]}{date})')
    if session.note:
        lines += ["", f"_{session.note}_"]
    return "\n".join(lines).rstrip() + "\n"


def research_export_docx(*, session: ResearchSession) -> bytes:
    """The report as a DOCX document. Raises Conflict (not completed)."""
    from docx import Document as DocxDocument

    report = _report(session)
    doc = DocxDocument()
    doc.core_properties.title = session.topic[:200]
    doc.add_heading(session.topic[:300], level=0)
    doc.add_paragraph(report.get("summary") or "")
    doc.add_heading("Key findings", level=1)
    for finding in report.get("findings") or []:
        doc.add_paragraph(f"{finding['text']} {_cites(finding.get('citations') or [])}", style="List Bullet")
    if report.get("open_questions"):
        doc.add_heading("Open questions", level=1)
        for question in report["open_questions"]:
            doc.add_paragraph(question, style="List Bullet")
    doc.add_heading("Sources", level=1)
    for source in report.get("sources") or []:
        parts = [f"[{source['number']}] {source['title']}", source["kind"]]
        if source.get("published"):
            parts.append(source["published"])
        if source.get("url"):
            parts.append(source["url"])
        doc.add_paragraph(" · ".join(parts))
    if session.note:
        doc.add_paragraph().add_run(session.note).italic = True
    buffer = io.BytesIO()
    doc.save(buffer)
    return buffer.getvalue()
