"""Run the parsing sandbox (parse_worker) in a child process and translate its answer."""

from __future__ import annotations

import json
import logging
import re
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings

from exograph.core.errors import ValidationError
from exograph.documents.models import DocumentType

logger = logging.getLogger(__name__)


class ParseFailed(ValidationError):
    """The file could not be parsed (damaged, encrypted, no text, over a limit). Status 400."""

    code = "parse_failed"


@dataclass(frozen=True)
class Block:
    text: str
    page: int | None
    heading: str = ""
    level: int = 0
    kind: str = "paragraph"


@dataclass(frozen=True)
class ParseResult:
    pages: int
    pages_estimated: bool
    blocks: list[Block] = field(default_factory=list)


def _sandbox_run(mode: str, kind: DocumentType, data: bytes, *, timeout: float) -> dict[str, Any]:
    # Run the worker file by path in isolated mode (-I): no Django or Celery imports in the sandbox,
    # which keeps its start-up near 0.2 s and its attack surface to pypdf/python-docx/lxml.
    command = [
        sys.executable,
        "-I",
        str(Path(__file__).with_name("parse_worker.py")),
        mode,
        kind.value,
        str(settings.DOCUMENTS_PARSE_MEMORY_MB),
        str(settings.DOCUMENTS_PARSE_CPU_SECONDS),
        str(settings.DOCUMENTS_MAX_PAGES),
    ]
    try:
        completed = subprocess.run(  # noqa: S603 - fixed argv, our own module
            command, input=data, capture_output=True, timeout=timeout, check=False, cwd=settings.BASE_DIR
        )
    except subprocess.TimeoutExpired as exc:
        raise ParseFailed(
            f"Parsing the file took longer than {timeout:.0f} s and was stopped.",
            code="parse_timeout",
            hint="Split the document into smaller files, or print it to a simpler PDF, and upload again.",
        ) from exc
    if completed.returncode != 0:
        returncode = completed.returncode
        killed_by = -returncode if returncode < 0 else None
        logger.warning("parse sandbox exited with %s: %s", returncode, completed.stderr[-500:])
        if killed_by in (signal.SIGXCPU, signal.SIGKILL):
            message = "Parsing the file used more CPU time than allowed and was stopped."
        else:
            message = "Parsing the file exceeded the parser's memory or safety limits."
        raise ParseFailed(
            message,
            code="parse_limit",
            hint="Split the document into smaller files, or print it to a simpler PDF, and upload again.",
        )
    try:
        answer: dict[str, Any] = json.loads(completed.stdout)
    except ValueError as exc:
        logger.warning("parse sandbox gave no JSON: %s", completed.stderr[-500:])
        raise ParseFailed(
            "The parser stopped unexpectedly on this file.",
            code="parse_limit",
            hint="Re-save the document in its editor (or print it to PDF) and upload again.",
        ) from exc
    if not answer.get("ok"):
        raise ParseFailed(
            str(answer.get("message") or "The file cannot be parsed."),
            code=str(answer.get("code") or "parse_failed"),
            hint=str(answer.get("hint") or ""),
        )
    return answer


_MD_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)[ \t#]*$")


def text_blocks(*, text: str, markdown: bool) -> list[Block]:
    """Blocks of a text document, in-process (no sandbox): one per paragraph; Markdown ATX headings
    (`#` … `######`) become the heading path ("A › B") of the paragraphs below them, as DOCX headings do."""
    blocks: list[Block] = []
    headings: list[str] = []
    paragraph: list[str] = []

    def flush() -> None:
        body = " ".join(" ".join(paragraph).split())
        if body:
            blocks.append(Block(text=body, page=None, heading=" › ".join(headings)))
        paragraph.clear()

    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        match = _MD_HEADING.match(line) if markdown else None
        if match:
            flush()
            level, title = len(match.group(1)), " ".join(match.group(2).split())
            headings = [*headings[: level - 1], title]
            blocks.append(Block(text=title, page=None, heading=" › ".join(headings), level=level, kind="heading"))
        elif line.strip():
            paragraph.append(line)
        else:
            flush()
    flush()
    return blocks


def document_inspect(*, data: bytes, content_type: DocumentType) -> ParseResult:
    """The cheap first pass before charging: page count (a PDF over the limit is refused before any page is
    read; a DOCX counts the larger of its declared and its estimated pages), refusal of files with no text.
    Raises ParseFailed."""
    answer = _sandbox_run("inspect", content_type, data, timeout=settings.DOCUMENTS_PARSE_TIMEOUT_SECONDS)
    pages = int(answer["pages"])
    if pages > settings.DOCUMENTS_MAX_PAGES:
        raise ParseFailed(
            f"The document has {pages} pages; the limit is {settings.DOCUMENTS_MAX_PAGES}.",
            code="too_many_pages",
            hint="Split it into smaller documents and upload them separately.",
        )
    return ParseResult(pages=pages, pages_estimated=bool(answer.get("pages_estimated")))


def document_text_extract(*, data: bytes, content_type: DocumentType, pages: int) -> ParseResult:
    """Full text with page numbers (PDF) and headings (DOCX), parsed in the sandbox. Raises ParseFailed."""
    timeout = min(
        float(settings.DOCUMENTS_PARSE_TIMEOUT_SECONDS), 30.0 + pages * settings.DOCUMENTS_PARSE_SECONDS_PER_PAGE
    )
    answer = _sandbox_run("parse", content_type, data, timeout=timeout)
    blocks = [
        Block(
            text=str(b["text"]),
            page=b.get("page"),
            heading=str(b.get("heading", "")),
            level=int(b.get("level", 0)),
            kind=str(b.get("kind", "paragraph")),
        )
        for b in answer["blocks"]
    ]
    return ParseResult(pages=int(answer["pages"]), pages_estimated=bool(answer.get("pages_estimated")), blocks=blocks)
