"""DOCX in the parsing sandbox: paragraphs, tables and headings in body order, through python-docx or
raw XML (Strict OOXML). A DOCX's page count is the larger of the pages its docProps/app.xml declares
(written by the client, so never trusted alone) and an estimate from its text: one page per
WORDS_PER_ESTIMATED_PAGE words or CHARS_PER_ESTIMATED_PAGE characters, whichever gives more pages."""

from __future__ import annotations

import io
import re
import zipfile
from typing import Any

# Inside the sandbox this file is a top-level module beside parse_common (see parse_worker). Choose by
# __package__, never by ImportError: the editable install makes `exograph` importable there too, and two
# copies of parse_common would make ParseRefused two classes (a refusal would then read as a crash).
if __package__:
    from exograph.documents.parse_common import Options, ParseRefused, too_many_pages
else:
    from parse_common import Options, ParseRefused, too_many_pages  # type: ignore[no-redef]

WORDS_PER_ESTIMATED_PAGE = 500
CHARS_PER_ESTIMATED_PAGE = 3000

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


def docx_parse(data: bytes, options: Options) -> dict[str, Any]:
    max_pages = options.max_pages
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
        raise too_many_pages(pages, max_pages)
    # Page numbers for citations: spread the blocks over the page count by word position.
    seen = 0
    for block in blocks:
        block["page"] = min(pages, 1 + (seen * pages) // max(words, 1))
        seen += len(block["text"].split())
    return {
        "pages": pages,
        "pages_estimated": declared is None or estimated > declared,
        "blocks": blocks,
        "engine": "python-docx",
    }


def docx_inspect(data: bytes, options: Options) -> dict[str, Any]:
    result = docx_parse(data, options)
    return {"pages": result["pages"], "pages_estimated": result["pages_estimated"], "engine": "python-docx"}
