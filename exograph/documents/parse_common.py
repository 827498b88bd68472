"""What the parsing sandbox's modules share: the refusal, the options a run gets, progress lines.

Imported by parse_worker.py, parse_pdf.py and parse_docx.py both inside the sandbox (as top-level
modules, from this folder) and in-process by tests (as exograph.documents.*). Never imports Django.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field

DEFAULT_MAX_PAGES = 2000
DEFAULT_OCR_MAX_PAGES = 100
DEFAULT_OCR_DPI = 150
# Progress lines on stderr start with this byte, so the parent tells them from a traceback.
PROGRESS_MARK = "\x1e"


class ParseRefused(Exception):
    def __init__(self, code: str, message: str, hint: str) -> None:
        super().__init__(message)
        self.code, self.message, self.hint = code, message, hint


def too_many_pages(pages: int, max_pages: int) -> ParseRefused:
    return ParseRefused(
        "too_many_pages",
        f"The document has {pages} pages; the limit is {max_pages}.",
        "Split it into smaller documents and upload them separately.",
    )


def progress_to_stderr(phase: str, done: int, total: int) -> None:
    """One progress line for the parent (parsing.py): MARK phase done total."""
    sys.stderr.write(f"{PROGRESS_MARK}{phase} {done} {total}\n")
    sys.stderr.flush()


def _no_progress(phase: str, done: int, total: int) -> None:
    return None


@dataclass
class Options:
    """Limits and knobs of one sandbox run (argv of parse_worker.py)."""

    max_pages: int = DEFAULT_MAX_PAGES
    # Pages without a text layer that may be OCR'd in one document (refused over it, before any OCR).
    ocr_max_pages: int = DEFAULT_OCR_MAX_PAGES
    # The address-space cap raised to this (MB) just before the OCR models load; 0 keeps the parse cap.
    ocr_memory_mb: int = 0
    ocr_dpi: int = DEFAULT_OCR_DPI
    progress: Callable[[str, int, int], None] = field(default=_no_progress)
    # Counters reported in every answer.
    pages_read: int = 0
    pages_ocr: int = 0
