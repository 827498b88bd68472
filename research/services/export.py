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


# Characters Markdown (CommonMark, GFM) gives a meaning inline: backslash-escaped so text stays text.
_MD_ACTIVE = re.compile(r"([\\`*_{}\[\]()#+!|~])")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def _md(text: object) -> str:
    """Outside text (topic, titles, findings) as inert Markdown: one line, no raw HTML (<, >, & as entities),
    no links, emphasis or code (their characters backslash-escaped); a renderer shows it as written."""
    line = " ".join(str(text or "").split())
    line = "".join(_HTML.get(char, char) for char in line)
    return _MD_ACTIVE.sub(r"\\\1", line)


def _md_url(url: object) -> str | None:
    """An http(s) URL as a Markdown link target (characters that would end or break it percent-encoded);
    None for any other scheme (javascript:, data:, ...), which is never linked."""
    value = str(url or "").strip()
    if not value.lower().startswith(("http://", "https://")) or any(ord(c) < 33 for c in value):
        return None
    for char, code in (("(", "%28"), (")", "%29"), ("<", "%3C"), (">", "%3E"), ("\\", "%5C"), ('"', "%22")):
        value = value.replace(char, code)
    return value


def research_export_markdown(*, session: ResearchSession) -> str:
    """The report as Markdown; citations link to the numbered sources. Everything that came from outside (the
    topic, titles, findings, questions, note) is escaped: it renders as text, never as HTML or a link.
    Raises Conflict (not completed)."""
    report = _report(session)
    lines = [f"# {_md(session.topic)}", "", _md(report.get("summary")), "", "## Key findings", ""]
    asked = None
    for finding in report.get("findings") or []:
        if finding.get("sub_question") and finding["sub_question"] != asked:  # findings grouped by sub-question
            asked = finding["sub_question"]
            lines += ["", f"### {_md(asked)}", ""] if lines[-1] else [f"### {_md(asked)}", ""]
        links = "".join(f"[[{int(n)}]](#source-{int(n)})" for n in finding.get("citations") or [])
        lines.append(f"- {_md(finding['text'])} {links}".rstrip())
    if report.get("open_questions"):
        lines += ["", "## Open questions", ""]
        lines += [f"- {_md(question)}" for question in report["open_questions"]]
    lines += ["", "## Sources", ""]
    for source in report.get("sources") or []:
        number = int(source["number"])
        title = _md(source.get("title"))
        url = _md_url(source.get("url"))
        head = f"[{title}]({url})" if url else title
        date = f", {_md(source['published'])}" if source.get("published") else ""
        lines.append(f'<a id="source-{number}"></a>{number}. {head} ({_md(source.get("kind"))}{date})')
    if session.note:
        lines += ["", f"_{_md(session.note)}_"]
    return "\n".join(lines).rstrip() + "\n"


# What XML 1.0 (and so python-docx) refuses: control characters, lone surrogates, U+FFFE/U+FFFF.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml(text: object) -> str:
    return _NOT_XML.sub("", str(text or ""))


def research_export_docx(*, session: ResearchSession) -> bytes:
    """The report as a DOCX document (plain text runs: nothing in it is interpreted). Raises Conflict."""
    from docx import Document as DocxDocument

    report = _report(session)
    doc = DocxDocument()
    doc.core_properties.title = _xml(session.topic)[:200]
    doc.add_heading(_xml(session.topic)[:300], level=0)
    doc.add_paragraph(_xml(report.get("summary")))
    doc.add_heading("Key findings", level=1)
    asked = None
    for finding in report.get("findings") or []:
        if finding.get("sub_question") and finding["sub_question"] != asked:
            asked = finding["sub_question"]
            doc.add_heading(_xml(asked)[:300], level=2)
        doc.add_paragraph(f"{_xml(finding['text'])} {_cites(finding.get('citations') or [])}", style="List Bullet")
    if report.get("open_questions"):
        doc.add_heading("Open questions", level=1)
        for question in report["open_questions"]:
            doc.add_paragraph(_xml(question), style="List Bullet")
    doc.add_heading("Sources", level=1)
    for source in report.get("sources") or []:
        parts = [f"[{source['number']}] {_xml(source['title'])}", _xml(source["kind"])]
        if source.get("published"):
            parts.append(_xml(source["published"]))
        if source.get("url"):
            parts.append(_xml(source["url"]))
        doc.add_paragraph(" · ".join(parts))
    if session.note:
        doc.add_paragraph().add_run(_xml(session.note)).italic = True
    buffer = io.BytesIO()
    doc.save(buffer)
    return buffer.getvalue()
