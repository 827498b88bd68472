"""Run the parsing sandbox (parse_worker) in a child process and translate its answer."""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings

from exograph.core.errors import ValidationError
from exograph.documents.models import DocumentType
from exograph.documents.parse_common import PROGRESS_MARK

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
    # Which engines read the text ("pypdf", "pdfium", "ocr", joined by "+"; "python-docx"; "" unknown),
    # and how many pages were (parse) or will be (inspect, as far as it looked) read by OCR.
    engine: str = ""
    ocr_pages: int = 0
    # The title the file's own metadata gives (inspect of a PDF: its /Title), "" when none.
    title: str = ""


# progress(fraction done, 0.0-1.0) while the sandbox parses; called in this process, from its stderr lines.
Progress = Callable[[float], None]


def _sandbox_command(mode: str, kind: DocumentType) -> list[str]:
    # Run the worker file by path in isolated mode (-I): no Django or Celery imports in the sandbox,
    # which keeps its start-up near 0.2 s and its attack surface to pypdf/pdfium/python-docx/lxml/OCR.
    return [
        sys.executable,
        "-I",
        str(Path(__file__).with_name("parse_worker.py")),
        mode,
        kind.value,
        str(settings.DOCUMENTS_PARSE_MEMORY_MB),
        str(_cpu_seconds(mode)),
        str(settings.DOCUMENTS_MAX_PAGES),
        str(settings.DOCUMENTS_OCR_MAX_PAGES),
        str(max(settings.DOCUMENTS_OCR_MEMORY_MB, settings.DOCUMENTS_PARSE_MEMORY_MB)),
        str(settings.DOCUMENTS_OCR_DPI),
    ]


def _cpu_seconds(mode: str) -> int:
    """The sandbox's CPU cap: parsing may OCR up to DOCUMENTS_OCR_MAX_PAGES pages, each with its own budget."""
    if mode != "parse":
        return int(settings.DOCUMENTS_PARSE_CPU_SECONDS)
    ocr = settings.DOCUMENTS_OCR_MAX_PAGES * settings.DOCUMENTS_OCR_CPU_SECONDS_PER_PAGE
    return int(settings.DOCUMENTS_PARSE_CPU_SECONDS + ocr)


class _Fraction:
    """Turns the worker's progress lines (phase done total) into one fraction: reading the pages' text is
    the first tenth, OCR (when pages need it) the other nine, and `done` the end."""

    def __init__(self, progress: Progress | None) -> None:
        self.progress = progress

    def line(self, raw: bytes) -> None:
        parts = raw.decode("ascii", "replace").strip().split()
        if self.progress is None or len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit():
            return
        phase, done, total = parts[0], int(parts[1]), max(1, int(parts[2]))
        share = min(1.0, done / total)
        if phase == "read":
            self.progress(0.1 * share)
        elif phase == "ocr":
            self.progress(0.1 + 0.9 * share)
        elif phase == "done":
            self.progress(1.0)


# What the sandbox is given of this process's environment: no secrets, no service URLs.
_SANDBOX_ENV_KEPT = ("PATH", "LANG", "LC_ALL", "TMPDIR", "OMP_NUM_THREADS")


def _sandbox_env() -> dict[str, str]:
    """The sandbox's environment: the few variables it needs, and glibc held to two malloc arenas. Each arena
    reserves up to 64 MB of address space, and threads that contend for malloc (onnxruntime's, under load) make new
    ones: without the bound, OCR of a many-page scan could cross the sandbox's address-space cap on a busy server
    and fail the document as too large."""
    kept = {name: os.environ[name] for name in _SANDBOX_ENV_KEPT if name in os.environ}
    return {**kept, "MALLOC_ARENA_MAX": "2"}


def _sandbox_exec(
    command: list[str], data: bytes, *, timeout: float, progress: Progress | None
) -> tuple[int, bytes, bytes]:
    """Run the worker: stdin fed and stdout read on threads, stderr read here line by line (progress);
    killed at the deadline. Returns (returncode, stdout, stderr without progress lines)."""
    process = subprocess.Popen(  # noqa: S603 - fixed argv, our own module
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=settings.BASE_DIR,
        env=_sandbox_env(),
    )
    stdin, stdout, stderr = process.stdin, process.stdout, process.stderr
    if stdin is None or stdout is None or stderr is None:  # pragma: no cover - PIPE always gives streams
        raise RuntimeError("sandbox pipes missing")
    out: list[bytes] = []
    timed_out = threading.Event()

    def feed() -> None:
        try:
            stdin.write(data)
            stdin.close()
        except OSError:  # the worker exited early (a limit): its answer says why
            pass

    def collect() -> None:
        out.append(stdout.read())

    def kill() -> None:
        timed_out.set()
        process.kill()

    threads = [threading.Thread(target=feed, daemon=True), threading.Thread(target=collect, daemon=True)]
    timer = threading.Timer(timeout, kill)
    timer.daemon = True
    for thread in threads:
        thread.start()
    timer.start()
    fraction = _Fraction(progress)
    errors: list[bytes] = []
    try:
        for raw in stderr:
            if raw.startswith(PROGRESS_MARK.encode()):
                fraction.line(raw[1:])
            else:
                errors.append(raw)
                del errors[:-50]
        process.wait()
        for thread in threads:
            thread.join()
    finally:
        timer.cancel()
        if process.poll() is None:
            process.kill()
            process.wait()
        stdout.close()
        stderr.close()
    if timed_out.is_set():
        raise subprocess.TimeoutExpired(command, timeout)
    return process.returncode, b"".join(out), b"".join(errors)


def _sandbox_run(
    mode: str, kind: DocumentType, data: bytes, *, timeout: float, progress: Progress | None = None
) -> dict[str, Any]:
    try:
        returncode, stdout, stderr = _sandbox_exec(
            _sandbox_command(mode, kind), data, timeout=timeout, progress=progress
        )
    except subprocess.TimeoutExpired as exc:
        raise ParseFailed(
            f"Parsing the file took longer than {timeout:.0f} s and was stopped.",
            code="parse_timeout",
            hint="Split the document into smaller files, or print it to a simpler PDF, and upload again.",
        ) from exc
    if returncode != 0:
        killed_by = -returncode if returncode < 0 else None
        logger.warning("parse sandbox exited with %s: %s", returncode, stderr[-500:])
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
        answer: dict[str, Any] = json.loads(stdout)
    except ValueError as exc:
        logger.warning("parse sandbox gave no JSON: %s", stderr[-500:])
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
    (`#` … `######`) become the heading path ("A › B") of the paragraphs below them, as DOCX headings do. A title
    line written straight above its paragraph ("History" then "A fishing village stood ...") is a paragraph of its
    own (_title_line), never glued to the sentence after it."""
    blocks: list[Block] = []
    headings: list[str] = []
    paragraph: list[str] = []

    def flush() -> None:
        body = " ".join(" ".join(paragraph).split())
        if body:
            blocks.append(Block(text=body, page=None, heading=" › ".join(headings)))
        paragraph.clear()

    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for index, line in enumerate(lines):
        match = _MD_HEADING.match(line) if markdown else None
        if match:
            flush()
            level, title = len(match.group(1)), " ".join(match.group(2).split())
            headings = [*headings[: level - 1], title]
            blocks.append(Block(text=title, page=None, heading=" › ".join(headings), level=level, kind="heading"))
        elif line.strip() and _title_line(lines, index, paragraph):
            flush()
            paragraph.append(line)
            flush()
        elif line.strip():
            paragraph.append(line)
        else:
            flush()
    flush()
    return blocks


_TITLE_END = re.compile(r"[.,;:!?…)\]\"'”’-]$")
_TITLE_TAIL = frozenset("a an the of and or to in on for with by at from as is was are were that".split())


def _title_line(lines: Sequence[str], index: int, paragraph: Sequence[str]) -> bool:
    """Whether lines[index] is a title written straight above the text it heads: a short capitalised line with no
    closing punctuation, at a paragraph's start or after a finished sentence, followed by a capitalised line, and
    much shorter than the paragraph's wrapped lines (a hard-wrapped sentence's middle line runs to the wrap width)."""
    line = lines[index].strip()
    following = lines[index + 1].strip() if index + 1 < len(lines) else ""
    words = line.split()
    if not following or not 1 <= len(words) <= 8 or len(line) > 60 or _TITLE_END.search(line):
        return False
    if not (line[:1].isupper() or line[:1].isdigit()) or not (following[:1].isupper() or following[:1].isdigit()):
        return False
    if words[-1].casefold() in _TITLE_TAIL or (paragraph and not re.search(r"[.!?:]$", paragraph[-1].strip())):
        return False
    width = max(len(other.strip()) for other in (*paragraph, following))
    return len(line) < 0.6 * width


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
    return ParseResult(
        pages=pages,
        pages_estimated=bool(answer.get("pages_estimated")),
        engine=str(answer.get("engine") or ""),
        ocr_pages=int(answer.get("ocr_pages") or 0),
        title=str(answer.get("title") or ""),
    )


def parse_timeout(pages: int) -> float:
    """Wall-clock seconds allowed to parse a document of `pages` pages, OCR of up to DOCUMENTS_OCR_MAX_PAGES
    of them included (each page may need OCR: the sandbox finds out)."""
    text = min(
        float(settings.DOCUMENTS_PARSE_TIMEOUT_SECONDS), 30.0 + pages * settings.DOCUMENTS_PARSE_SECONDS_PER_PAGE
    )
    ocr = min(pages, settings.DOCUMENTS_OCR_MAX_PAGES) * settings.DOCUMENTS_OCR_SECONDS_PER_PAGE
    return text + ocr


def document_text_extract(
    *, data: bytes, content_type: DocumentType, pages: int, progress: Progress | None = None
) -> ParseResult:
    """Full text with page numbers (PDF) and headings (DOCX), parsed in the sandbox (OCR for PDF pages
    without a text layer). `progress(fraction)` is called per page. Raises ParseFailed."""
    answer = _sandbox_run("parse", content_type, data, timeout=parse_timeout(pages), progress=progress)
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
    return ParseResult(
        pages=int(answer["pages"]),
        pages_estimated=bool(answer.get("pages_estimated")),
        blocks=blocks,
        engine=str(answer.get("engine") or ""),
        ocr_pages=int(answer.get("ocr_pages") or 0),
    )
