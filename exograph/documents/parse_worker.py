"""The parsing sandbox: `python parse_worker.py MODE TYPE MEMORY_MB CPU_SECONDS MAX_PAGES [OCR_MAX_PAGES
OCR_MEMORY_MB OCR_DPI]`, file bytes on stdin.

Runs in a child process with RLIMIT_AS / RLIMIT_CPU set before pypdf, pdfium, python-docx or the OCR
engine is imported, so a hostile file can exhaust only this process. The address-space cap starts at
MEMORY_MB; its hard limit is OCR_MEMORY_MB, to which parse_pdf raises it just before loading the OCR
models (only for a PDF with pages to OCR). Writes one JSON object to stdout: {"ok": true, ...} or
{"ok": false, "code", "message", "hint"}; progress lines go to stderr (parse_common.PROGRESS_MARK).
Never imports Django.

MODE `inspect` is the cheap first pass before charging (page count, is there any text, how many pages
need OCR); MODE `parse` returns the text blocks: PDF per page (parse_pdf), DOCX per paragraph/table with
headings (parse_docx). A PDF over MAX_PAGES is refused from its page tree's count before any page is read;
one with more than OCR_MAX_PAGES pages to OCR before any page is OCR'd. Every answer carries
`pages_read` (PDF pages whose text was extracted) and `pages_ocr` (pages OCR'd).
"""

from __future__ import annotations

import json
import logging
import os
import sys
from typing import Any

if __package__:
    from exograph.documents.parse_common import (
        DEFAULT_MAX_PAGES,
        DEFAULT_OCR_DPI,
        DEFAULT_OCR_MAX_PAGES,
        Options,
        ParseRefused,
        progress_to_stderr,
    )
    from exograph.documents.parse_docx import docx_inspect, docx_parse
    from exograph.documents.parse_pdf import pdf_inspect, pdf_parse
else:  # the sandbox runs this file by path in isolated mode: its siblings come from this folder,
    # searched last so that no sibling (selectors.py!) shadows a standard-library module.
    sys.path.append(os.path.dirname(os.path.abspath(__file__)))
    from parse_common import (  # type: ignore[no-redef]
        DEFAULT_MAX_PAGES,
        DEFAULT_OCR_DPI,
        DEFAULT_OCR_MAX_PAGES,
        Options,
        ParseRefused,
        progress_to_stderr,
    )
    from parse_docx import docx_inspect, docx_parse  # type: ignore[no-redef]
    from parse_pdf import pdf_inspect, pdf_parse  # type: ignore[no-redef]


def limits_apply(memory_mb: int, cpu_seconds: int, *, memory_hard_mb: int = 0) -> None:
    import resource

    memory = memory_mb * 1024 * 1024
    hard = max(memory, memory_hard_mb * 1024 * 1024)
    resource.setrlimit(resource.RLIMIT_AS, (memory, hard))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 5))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


HANDLERS = {
    ("inspect", "pdf"): pdf_inspect,
    ("parse", "pdf"): pdf_parse,
    ("inspect", "docx"): docx_inspect,
    ("parse", "docx"): docx_parse,
}


def run(
    mode: str,
    kind: str,
    data: bytes,
    *,
    max_pages: int = DEFAULT_MAX_PAGES,
    ocr_max_pages: int = DEFAULT_OCR_MAX_PAGES,
    ocr_dpi: int = DEFAULT_OCR_DPI,
    options: Options | None = None,
) -> dict[str, Any]:
    """The handler's answer as a JSON-able dict, with `pages_read` and `pages_ocr`."""
    options = options or Options(max_pages=max_pages, ocr_max_pages=ocr_max_pages, ocr_dpi=ocr_dpi)
    answer = _run(mode, kind, data, options)
    answer["pages_read"] = options.pages_read
    answer["pages_ocr"] = options.pages_ocr
    return answer


def _run(mode: str, kind: str, data: bytes, options: Options) -> dict[str, Any]:
    try:
        return {"ok": True, **HANDLERS[(mode, kind)](data, options)}
    except ParseRefused as exc:
        return {"ok": False, "code": exc.code, "message": exc.message, "hint": exc.hint}
    except MemoryError:
        return {
            "ok": False,
            "code": "parse_limit",
            "message": "The file needs more memory to parse than this server allows.",
            "hint": "Split the document into smaller files or export it again with fewer images.",
        }
    except RecursionError:
        return {
            "ok": False,
            "code": "corrupt_document",
            "message": "The file is nested too deeply to parse.",
            "hint": "Re-save it in a standard editor and upload again.",
        }
    except Exception as exc:  # noqa: BLE001 - any parser failure on a hostile file is the file's fault
        if "bad_alloc" in str(exc) or "Failed to allocate" in str(exc):  # onnxruntime out of memory
            return {
                "ok": False,
                "code": "parse_limit",
                "message": "Reading the scanned pages needs more memory than this server allows.",
                "hint": "Split the document into smaller files, or scan it at a lower resolution.",
            }
        return {
            "ok": False,
            "code": "corrupt_document",
            "message": f"The {kind.upper()} cannot be parsed ({type(exc).__name__}: {str(exc)[:160]}).",
            "hint": "Open and re-save it in its editor (or print it to PDF), then upload again.",
        }


def main(argv: list[str]) -> int:
    mode, kind = argv[1], argv[2]
    memory_mb, cpu_seconds = int(argv[3]), int(argv[4])
    max_pages = int(argv[5]) if len(argv) > 5 else DEFAULT_MAX_PAGES
    ocr_max_pages = int(argv[6]) if len(argv) > 6 else DEFAULT_OCR_MAX_PAGES
    ocr_memory_mb = int(argv[7]) if len(argv) > 7 else 0
    ocr_dpi = int(argv[8]) if len(argv) > 8 else DEFAULT_OCR_DPI
    limits_apply(memory_mb, cpu_seconds, memory_hard_mb=ocr_memory_mb)
    logging.disable(logging.CRITICAL)  # pypdf warns per font; the caller only reads our JSON
    import warnings

    warnings.simplefilter("ignore")
    # Our JSON is the only thing on stdout: anything a library prints goes to stderr instead.
    answer_fd = os.dup(1)
    os.dup2(2, 1)
    data = sys.stdin.buffer.read()
    sys.setrecursionlimit(5000)
    options = Options(
        max_pages=max_pages,
        ocr_max_pages=ocr_max_pages,
        ocr_memory_mb=ocr_memory_mb,
        ocr_dpi=ocr_dpi,
        progress=progress_to_stderr,
    )
    result = run(mode, kind, data, options=options)
    with os.fdopen(answer_fd, "w", encoding="utf-8") as out:
        out.write(json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
