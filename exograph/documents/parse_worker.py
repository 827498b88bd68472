"""The parsing sandbox: `python parse_worker.py MODE TYPE MEMORY_MB CPU_SECONDS MAX_PAGES`, file bytes on stdin.

Runs in a child process with RLIMIT_AS / RLIMIT_CPU set before pypdf or python-docx is
imported, so a hostile file can exhaust only this process. Writes one JSON object to
stdout: {"ok": true, ...} or {"ok": false, "code", "message", "hint"}. Never imports Django.

MODE `inspect` is the cheap first pass before charging (page count, is there any text);
MODE `parse` returns the text blocks: PDF per page, DOCX per paragraph/table with headings.
A PDF over MAX_PAGES is refused from its page tree's count before any page is read. A DOCX's
page count is the larger of the pages its docProps/app.xml declares (written by the client, so
never trusted alone) and an estimate from its text: one page per WORDS_PER_ESTIMATED_PAGE words
or CHARS_PER_ESTIMATED_PAGE characters, whichever gives more pages.
Every answer carries `pages_read`, the number of PDF pages whose text was extracted.
"""

from __future__ import annotations

import io
import json
import logging
import re
import sys
import zipfile
from typing import Any

WORDS_PER_ESTIMATED_PAGE = 500
CHARS_PER_ESTIMATED_PAGE = 3000
DEFAULT_MAX_PAGES = 2000

# PDF pages whose text was extracted in this process (reported in every answer).
_pages_read = 0


class ParseRefused(Exception):
    def __init__(self, code: str, message: str, hint: str) -> None:
        super().__init__(message)
        self.code, self.message, self.hint = code, message, hint


def limits_apply(memory_mb: int, cpu_seconds: int) -> None:
    import resource

    memory = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 5))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


# --- PDF ------------------------------------------------------------------------------------

_ENCRYPTED = ParseRefused(
    "encrypted_document",
    "encrypted PDF: remove the password and upload again.",
    "Open the PDF with its password and save or print it to a new PDF without one.",
)


def _too_many_pages(pages: int, max_pages: int) -> ParseRefused:
    return ParseRefused(
        "too_many_pages",
        f"The document has {pages} pages; the limit is {max_pages}.",
        "Split it into smaller documents and upload them separately.",
    )


def _declared_page_count(reader: Any) -> int | None:
    """The page tree's /Count: one number from the catalog, read without walking the pages."""
    try:
        count = reader.trailer["/Root"]["/Pages"]["/Count"]
    except (KeyError, TypeError, AttributeError, ValueError):
        return None
    return int(count) if isinstance(count, int) else None


def _pdf_open(data: bytes, *, max_pages: int) -> Any:
    from pypdf import PdfReader
    from pypdf.errors import FileNotDecryptedError, PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            try:
                if not reader.decrypt(""):
                    raise _ENCRYPTED
            except (FileNotDecryptedError, NotImplementedError) as exc:
                raise _ENCRYPTED from exc
        # The cheap check first: a 100k-page file is refused before its page tree is walked.
        declared = _declared_page_count(reader)
        if declared is not None and declared > max_pages:
            raise _too_many_pages(declared, max_pages)
        pages = len(reader.pages)  # walks the page tree (the /Count may lie); no page is read yet
        if pages > max_pages:
            raise _too_many_pages(pages, max_pages)
    except ParseRefused:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, IndexError, EOFError, OSError) as exc:
        raise ParseRefused(
            "corrupt_document",
            f"The PDF is damaged or truncated and cannot be read ({str(exc)[:160]}).",
            "Open it in a PDF viewer, save or print it to a new PDF, and upload that.",
        ) from exc
    return reader


def _page_text(page: Any) -> str:
    global _pages_read
    _pages_read += 1
    try:
        text = page.extract_text() or ""
    except Exception:  # noqa: BLE001 - one bad page must not sink the document
        return ""
    return text.replace("\x00", "").strip()


_NO_TEXT_PDF = ParseRefused(
    "no_extractable_text",
    "The PDF has no extractable text layer (it looks scanned or image-only).",
    "OCR is not supported: run the PDF through an OCR tool (e.g. ocrmypdf) and upload the result.",
)


# A page "has text" with at least this many letters (a stray scanner watermark has fewer).
MIN_PAGE_LETTERS = 12
# A PDF is treated as scanned when under a quarter of its pages have text and the text is thin.
MIN_TEXT_PAGE_SHARE = 0.25
MIN_LETTERS_PER_PAGE = 40


def _letters(text: str) -> int:
    return sum(ch.isalpha() for ch in text)


class _TextTally:
    """Decides whether a PDF has real text, stopping as early as the answer is known."""

    def __init__(self, pages: int) -> None:
        self.pages, self.text_pages, self.letters = pages, 0, 0

    def add(self, text: str) -> None:
        letters = _letters(text)
        self.letters += letters
        if letters >= MIN_PAGE_LETTERS:
            self.text_pages += 1

    @property
    def enough(self) -> bool:
        return (
            self.text_pages >= max(1, MIN_TEXT_PAGE_SHARE * self.pages)
            or self.letters >= MIN_LETTERS_PER_PAGE * self.pages
        ) and self.text_pages > 0


def pdf_inspect(data: bytes, *, max_pages: int = DEFAULT_MAX_PAGES) -> dict[str, Any]:
    reader = _pdf_open(data, max_pages=max_pages)
    pages = len(reader.pages)
    tally = _TextTally(pages)
    for page in reader.pages:
        tally.add(_page_text(page))
        if tally.enough:
            return {"pages": pages, "pages_estimated": False}
    raise _NO_TEXT_PDF


def pdf_parse(data: bytes, *, max_pages: int = DEFAULT_MAX_PAGES) -> dict[str, Any]:
    reader = _pdf_open(data, max_pages=max_pages)
    blocks = []
    tally = _TextTally(len(reader.pages))
    for number, page in enumerate(reader.pages, start=1):
        text = _page_text(page)
        tally.add(text)
        if text:
            blocks.append({"page": number, "heading": "", "level": 0, "kind": "page", "text": text})
    if not tally.enough:
        raise _NO_TEXT_PDF
    return {"pages": len(reader.pages), "pages_estimated": False, "blocks": blocks}


# --- DOCX -----------------------------------------------------------------------------------

_HEADING = re.compile(r"^(?:heading|überschrift|titre|заголовок|título|titolo|kop)\s*(\d)$", re.IGNORECASE)


def _local(tag: Any) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _attr(element: Any, name: str) -> str | None:
    for key, value in element.attrib.items():
        if _local(key) == name:
            return str(value)
    return None


def _text_of(element: Any) -> str:
    """All text under an element (text boxes included), skipping mc:Fallback duplicates."""
    parts: list[str] = []
    stack: list[Any] = [element]
    while stack:
        node = stack.pop()
        if node is None:  # end of a paragraph
            parts.append("\n")
            continue
        name = _local(node.tag)
        if name == "p" and node is not element:
            stack.append(None)
        if name == "Fallback":
            continue
        if name == "t" and node.text:
            parts.append(node.text)
        elif name == "tab":
            parts.append("\t")
        elif name in ("br", "cr"):
            parts.append("\n")
        stack.extend(reversed(list(node)))
    return "".join(parts)


def _style_names(styles_root: Any) -> dict[str, tuple[str, int | None]]:
    """styleId → (name, outline level) from styles.xml."""
    names: dict[str, tuple[str, int | None]] = {}
    if styles_root is None:
        return names
    for style in styles_root:
        if _local(style.tag) != "style":
            continue
        style_id = _attr(style, "styleId") or ""
        name, level = style_id, None
        for child in style.iter():
            local = _local(child.tag)
            if local == "name":
                name = _attr(child, "val") or name
            elif local == "outlineLvl":
                value = _attr(child, "val")
                level = int(value) + 1 if value and value.isdigit() else None
        names[style_id] = (name, level)
    return names


def _heading_level(paragraph: Any, styles: dict[str, tuple[str, int | None]]) -> int:
    for ppr in paragraph:
        if _local(ppr.tag) != "pPr":
            continue
        for child in ppr:
            local = _local(child.tag)
            if local == "outlineLvl":
                value = _attr(child, "val") or ""
                if value.isdigit() and int(value) < 9:
                    return int(value) + 1
            if local == "pStyle":
                style_id = _attr(child, "val") or ""
                name, level = styles.get(style_id, (style_id, None))
                match = _HEADING.match(name.strip()) or _HEADING.match(style_id.strip())
                if match:
                    return int(match.group(1))
                if name.strip().lower() == "title":
                    return 1
                if level is not None and level < 9:
                    return level
    return 0


def _docx_pages(data: bytes) -> int | None:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        try:
            app = archive.read("docProps/app.xml")
        except KeyError:
            return None
    match = re.search(rb"<(?:\w+:)?Pages>\s*(\d+)\s*</(?:\w+:)?Pages>", app)
    if match and int(match.group(1)) > 0:
        return int(match.group(1))
    return None


def _docx_body(data: bytes) -> tuple[Any, dict[str, tuple[str, int | None]]]:
    """The body element and style names: through python-docx, or raw XML for Strict OOXML files."""
    import docx
    from docx.opc.exceptions import PackageNotFoundError

    try:
        document = docx.Document(io.BytesIO(data))
        styles_root = document.styles.element
        return document.element.body, _style_names(styles_root)
    except PackageNotFoundError as exc:
        raise ParseRefused(
            "corrupt_document",
            "The DOCX file is damaged and cannot be opened.",
            "Open and re-save it in Word or LibreOffice, then upload again.",
        ) from exc
    except (KeyError, ValueError, AttributeError) as exc:
        # Strict Open XML (ISO 29500 strict namespaces) is valid Word but python-docx cannot read it.
        return _docx_body_raw(data, exc)


def _docx_body_raw(data: bytes, cause: Exception) -> tuple[Any, dict[str, tuple[str, int | None]]]:
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            root = etree.fromstring(archive.read("word/document.xml"), parser)
            try:
                styles_root = etree.fromstring(archive.read("word/styles.xml"), parser)
            except KeyError:
                styles_root = None
    except (KeyError, zipfile.BadZipFile, etree.XMLSyntaxError) as exc:
        raise ParseRefused(
            "corrupt_document",
            f"The DOCX file is damaged and cannot be read ({type(cause).__name__}).",
            "Open and re-save it in Word or LibreOffice, then upload again.",
        ) from exc
    body = next((child for child in root if _local(child.tag) == "body"), None)
    if body is None:
        raise ParseRefused(
            "corrupt_document",
            "The DOCX has no document body.",
            "Open and re-save it in Word or LibreOffice, then upload again.",
        )
    return body, _style_names(styles_root)


def _table_rows(table: Any) -> list[str]:
    rows = []
    for row in table.iter():
        if _local(row.tag) != "tr":
            continue
        cells = [" ".join(_text_of(cell).split()) for cell in row if _local(cell.tag) == "tc"]
        if any(cells):
            rows.append(" | ".join(cells))
    return rows


def docx_pages_estimate(words: int, chars: int) -> int:
    """Pages from the text itself: WORDS_PER_ESTIMATED_PAGE words or CHARS_PER_ESTIMATED_PAGE characters a page."""
    return max(1, -(-words // WORDS_PER_ESTIMATED_PAGE), -(-chars // CHARS_PER_ESTIMATED_PAGE))


def docx_parse(data: bytes, *, max_pages: int = DEFAULT_MAX_PAGES) -> dict[str, Any]:
    body, styles = _docx_body(data)
    blocks: list[dict[str, Any]] = []
    headings: list[str] = []
    for element in body:
        local = _local(element.tag)
        if local == "p":
            text = " ".join(_text_of(element).split())
            if not text:
                continue
            level = _heading_level(element, styles)
            if level:
                headings = headings[: level - 1] + [text]
                blocks.append({"heading": " › ".join(headings), "level": level, "kind": "heading", "text": text})
            else:
                blocks.append({"heading": " › ".join(headings), "level": 0, "kind": "paragraph", "text": text})
        elif local == "tbl":
            rows = _table_rows(element)
            if rows:
                blocks.append({"heading": " › ".join(headings), "level": 0, "kind": "table", "text": "\n".join(rows)})
        elif local == "sdt":
            text = " ".join(_text_of(element).split())
            if text:
                blocks.append({"heading": " › ".join(headings), "level": 0, "kind": "paragraph", "text": text})
    if not blocks:
        raise ParseRefused(
            "no_extractable_text",
            "The DOCX contains no text.",
            "Add text to the document (images are not read; OCR is not supported) and upload again.",
        )
    words = sum(len(block["text"].split()) for block in blocks)
    chars = sum(len(block["text"]) for block in blocks)
    declared = _docx_pages(data)
    estimated = docx_pages_estimate(words, chars)
    # The declared count is the client's word: it can raise the price (a page of pictures), never lower it.
    pages = max(declared or 0, estimated)
    if pages > max_pages:
        raise _too_many_pages(pages, max_pages)
    # Page numbers for citations: spread the blocks over the page count by word position.
    seen = 0
    for block in blocks:
        block["page"] = min(pages, 1 + (seen * pages) // max(words, 1))
        seen += len(block["text"].split())
    return {"pages": pages, "pages_estimated": declared is None or estimated > declared, "blocks": blocks}


def docx_inspect(data: bytes, *, max_pages: int = DEFAULT_MAX_PAGES) -> dict[str, Any]:
    result = docx_parse(data, max_pages=max_pages)
    return {"pages": result["pages"], "pages_estimated": result["pages_estimated"]}


HANDLERS = {
    ("inspect", "pdf"): pdf_inspect,
    ("parse", "pdf"): pdf_parse,
    ("inspect", "docx"): docx_inspect,
    ("parse", "docx"): docx_parse,
}


def run(mode: str, kind: str, data: bytes, *, max_pages: int = DEFAULT_MAX_PAGES) -> dict[str, Any]:
    """The handler's answer as a JSON-able dict, with `pages_read` (PDF pages whose text was extracted)."""
    global _pages_read
    _pages_read = 0
    answer = _run(mode, kind, data, max_pages=max_pages)
    answer["pages_read"] = _pages_read
    return answer


def _run(mode: str, kind: str, data: bytes, *, max_pages: int) -> dict[str, Any]:
    try:
        return {"ok": True, **HANDLERS[(mode, kind)](data, max_pages=max_pages)}
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
    limits_apply(memory_mb, cpu_seconds)
    logging.disable(logging.CRITICAL)  # pypdf warns per font; the caller only reads our JSON
    import warnings

    warnings.simplefilter("ignore")
    data = sys.stdin.buffer.read()
    sys.setrecursionlimit(5000)
    result = run(mode, kind, data, max_pages=max_pages)
    sys.stdout.write(json.dumps(result, ensure_ascii=False))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
