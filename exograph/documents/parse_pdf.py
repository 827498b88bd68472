"""PDF in the parsing sandbox: three engines, page by page, under the sandbox's limits.

1. pypdf reads each page's text layer (content-stream order, which keeps a column-by-column layout
   such as LaTeX's twocolumn in reading order).
2. pdfium (pypdfium2) is the second text engine: used for a page when pypdf's text is empty or looks
   like garbage (undecodable CID glyphs come out as a scatter of unrelated scripts and combining marks),
   and for the whole file when pypdf cannot open it at all (e.g. no valid xref) but pdfium can.
3. OCR (RapidOCR, PP-OCR models shipped inside its wheel, onnxruntime; no network) reads the pages that
   still have no text but carry an image, rendered by pdfium at `ocr_dpi`. Only those pages: a mixed PDF
   keeps its text layer elsewhere. A document needing more than `ocr_max_pages` OCR pages is refused
   before the first page is OCR'd.

Every page keeps its number; each answer names the engines that produced the text ("pypdf",
"pypdf+ocr", ...).
"""

from __future__ import annotations

import io
import re
import unicodedata
from collections import Counter
from typing import Any

# Inside the sandbox this file is a top-level module beside parse_common (see parse_worker). Choose by
# __package__, never by ImportError: the editable install makes `exograph` importable there too, and two
# copies of parse_common would make ParseRefused two classes (a refusal would then read as a crash).
if __package__:
    from exograph.documents.parse_common import Options, ParseRefused, too_many_pages
else:
    from parse_common import Options, ParseRefused, too_many_pages  # type: ignore[no-redef]

ENGINE_PYPDF = "pypdf"
ENGINE_PDFIUM = "pdfium"
ENGINE_OCR = "ocr"
ENGINES = (ENGINE_PYPDF, ENGINE_PDFIUM, ENGINE_OCR)

# A page "has text" with at least this many letters (a stray scanner watermark has fewer).
MIN_PAGE_LETTERS = 12
# A PDF is treated as scanned when under a quarter of its pages have text and the text is thin.
MIN_TEXT_PAGE_SHARE = 0.25
MIN_LETTERS_PER_PAGE = 40
# pypdf text scoring at least this garbage (see text_garbage) is compared with pdfium's.
GARBAGE_SUSPECT = 0.15
# pdfium's text replaces pypdf's when its garbage score is lower by this margin.
GARBAGE_MARGIN = 0.1
# Rendered pages for OCR are at most this many pixels on their longer side.
OCR_MAX_SIDE_PX = 3000
# The blank-page check renders at INK_DPI (at most INK_MAX_SIDE_PX); a page needs this share of dark pixels.
INK_DPI = 24
INK_MAX_SIDE_PX = 400
MIN_INK_SHARE = 0.0005

ENCRYPTED = ParseRefused(
    "encrypted_document",
    "encrypted PDF: remove the password and upload again.",
    "Open the PDF with its password and save or print it to a new PDF without one.",
)
_NO_TEXT = ParseRefused(
    "no_extractable_text",
    "The PDF has almost no text and no page images to read by OCR (it looks blank).",
    "Check that the file is the document you meant, export it again from its editor, and upload that.",
)
_OCR_FOUND_NOTHING = ParseRefused(
    "no_extractable_text",
    "The PDF has no text layer and OCR found no readable text on its page images.",
    "Scan the pages again at 300 dpi or better, with the text upright, and upload the result.",
)


def _too_many_ocr_pages(seen: int, limit: int) -> ParseRefused:
    return ParseRefused(
        "too_many_ocr_pages",
        f"The PDF has more than {limit} pages without a text layer (at least {seen}); "
        f"at most {limit} pages of one document are read by OCR.",
        f"Split the scan into documents of at most {limit} pages, or run it through an OCR tool "
        "(e.g. ocrmypdf) first and upload the result.",
    )


def _corrupt(exc: Exception) -> ParseRefused:
    return ParseRefused(
        "corrupt_document",
        f"The PDF is damaged or truncated and cannot be read ({str(exc)[:160]}).",
        "Open it in a PDF viewer, save or print it to a new PDF, and upload that.",
    )


# --- text quality -----------------------------------------------------------------------------

_LIGATURES = {code: unicodedata.normalize("NFKC", chr(code)) for code in range(0xFB00, 0xFB07)}
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff]")
# "dan-\ngerous", also with spaces or tabs around the line break ("dan- \ngerous", an OCR layer's line ends)
_HYPHEN_BREAK = re.compile(r"(?<=[a-zß-ÿ])-[ \t]*\n[ \t]*(?=[a-zß-ÿ])")
_CJK_WORDS = {"HIRAGANA", "KATAKANA", "CJK", "IDEOGRAPHIC", "HALFWIDTH", "FULLWIDTH", "HANGUL"}


def text_clean(text: str) -> str:
    """Line breaks unified, control bytes dropped, ligatures (ﬁ, ﬂ) spelled out, words hyphenated across
    a line break joined again."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROL.sub("", text).translate(_LIGATURES)
    return _HYPHEN_BREAK.sub("", text).strip()


def letters(text: str) -> int:
    return sum(ch.isalpha() for ch in text)


def _script(ch: str) -> str:
    word = unicodedata.name(ch, "?").split(" ", 1)[0]
    return "CJK" if word in _CJK_WORDS else word


def text_garbage(text: str) -> float:
    """0 for clean text, higher for mojibake: the share of replacement, private-use, unassigned and
    combining characters, plus 0.05 for every script past the first holding 3 % of the letters (an
    undecoded CID font scatters its glyphs over Greek, Bengali, Arabic, IPA ... at once)."""
    chars = [ch for ch in text if not ch.isspace()]
    if not chars:
        return 1.0
    bad = sum(ch == "\ufffd" or unicodedata.category(ch) in ("Co", "Cn", "Cs", "Mn") for ch in chars)
    bad += 5 * text.count("(cid:")
    scripts = Counter(_script(ch) for ch in chars if ch.isalpha())
    total = sum(scripts.values()) or 1
    major = sum(1 for count in scripts.values() if count >= 0.03 * total)
    return bad / len(chars) + 0.05 * max(0, major - 1)


class TextTally:
    """Decides whether a PDF has real text, stopping as early as the answer is known."""

    def __init__(self, pages: int) -> None:
        self.pages, self.text_pages, self.letters = pages, 0, 0

    def add(self, text: str) -> None:
        count = letters(text)
        self.letters += count
        if count >= MIN_PAGE_LETTERS:
            self.text_pages += 1

    @property
    def enough(self) -> bool:
        return (
            self.text_pages >= max(1, MIN_TEXT_PAGE_SHARE * self.pages)
            or self.letters >= MIN_LETTERS_PER_PAGE * self.pages
        ) and self.text_pages > 0


# --- the file, opened by pypdf and (lazily) pdfium ---------------------------------------------


def _declared_page_count(reader: Any) -> int | None:
    """The page tree's /Count: one number from the catalog, read without walking the pages."""
    try:
        count = reader.trailer["/Root"]["/Pages"]["/Count"]
    except (KeyError, TypeError, AttributeError, ValueError):
        return None
    return int(count) if isinstance(count, int) else None


class Pdf:
    """One PDF: pypdf's reader when pypdf opens it, pdfium's document when needed."""

    def __init__(self, data: bytes, options: Options) -> None:
        self.data, self.options = data, options
        self.reader: Any = None
        self._pdfium: Any = None
        self._pdfium_failed = False
        try:
            self.reader = self._pypdf_open()
        except ParseRefused as refused:
            if refused.code != "corrupt_document":
                raise
            # pypdf cannot open it; another reader may (e.g. a file without a valid xref table).
            if self.pdfium() is None:
                raise
        if self.reader is not None:
            self.pages = len(self.reader.pages)
        else:
            self.pages = len(self.pdfium())
            if self.pages > options.max_pages:
                raise too_many_pages(self.pages, options.max_pages)
        if self.pages == 0:
            raise _corrupt(ValueError("no pages"))

    def _pypdf_open(self) -> Any:
        from pypdf import PdfReader
        from pypdf.errors import FileNotDecryptedError, PdfReadError

        try:
            reader = PdfReader(io.BytesIO(self.data), strict=False)
            if reader.is_encrypted:
                try:
                    if not reader.decrypt(""):
                        raise ENCRYPTED
                except (FileNotDecryptedError, NotImplementedError) as exc:
                    raise ENCRYPTED from exc
            # The cheap check first: a 100k-page file is refused before its page tree is walked.
            declared = _declared_page_count(reader)
            if declared is not None and declared > self.options.max_pages:
                raise too_many_pages(declared, self.options.max_pages)
            pages = len(reader.pages)  # walks the page tree (the /Count may lie); no page is read yet
            if pages > self.options.max_pages:
                raise too_many_pages(pages, self.options.max_pages)
        except ParseRefused:
            raise
        except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, IndexError, EOFError, OSError) as exc:
            raise _corrupt(exc) from exc
        return reader

    def pdfium(self) -> Any:
        """pdfium's document, or None when pdfium cannot open the file either."""
        if self._pdfium is None and not self._pdfium_failed:
            import pypdfium2

            try:
                self._pdfium = pypdfium2.PdfDocument(self.data)
            except pypdfium2.PdfiumError as exc:
                self._pdfium_failed = True
                if "password" in str(exc).lower():
                    raise ENCRYPTED from exc
        return self._pdfium

    def title(self) -> str:
        """The document information dictionary's /Title, one line (at most 500 characters), or "" when it has
        none or cannot be read: pypdf's reading, pdfium's when pypdf could not open the file."""
        try:
            if self.reader is not None:
                info = self.reader.metadata
                raw = info.title if info is not None else None
            else:
                document = self.pdfium()
                raw = document.get_metadata_dict().get("Title") if document is not None else None
        except Exception:  # noqa: BLE001 - a damaged information dictionary only loses the title
            return ""
        return " ".join(str(raw or "").split())[:500]

    def close(self) -> None:
        if self._pdfium is not None:
            self._pdfium.close()
            self._pdfium = None

    def pypdf_text(self, index: int) -> str:
        if self.reader is None:
            return ""
        try:
            return text_clean(self.reader.pages[index].extract_text() or "")
        except Exception:  # noqa: BLE001 - one bad page must not sink the document
            return ""

    def pdfium_text(self, index: int) -> str:
        document = self.pdfium()
        if document is None:
            return ""
        try:
            page = document[index]
            return text_clean(page.get_textpage().get_text_bounded())
        except Exception:  # noqa: BLE001 - one bad page must not sink the document
            return ""

    def has_image(self, index: int) -> bool:
        document = self.pdfium()
        if document is None:
            return False
        import pypdfium2.raw as pdfium_c

        try:
            page = document[index]
            return next(iter(page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=4)), None) is not None
        except Exception:  # noqa: BLE001
            return False

    def has_ink(self, index: int) -> bool:
        """Whether the page, rendered small, shows anything to read (a damaged scan renders blank)."""
        try:
            page = self.pdfium()[index]
            width, height = page.get_size()
            scale = min(INK_DPI / 72.0, INK_MAX_SIDE_PX / max(width, height, 1.0))
            pixels = page.render(scale=scale, grayscale=True).to_numpy()
        except Exception:  # noqa: BLE001
            return False
        return bool(pixels.size) and float((pixels < 128).mean()) >= MIN_INK_SHARE

    def ocr_candidate(self, index: int, text: str) -> bool:
        """A page to OCR: no text layer to speak of, but an image that renders to something."""
        return letters(text) < MIN_PAGE_LETTERS and self.has_image(index) and self.has_ink(index)

    def render(self, index: int) -> Any:
        """The page as a BGR pixel array for OCR, at ocr_dpi (smaller for huge pages)."""
        page = self.pdfium()[index]
        width, height = page.get_size()
        scale = min(self.options.ocr_dpi / 72.0, OCR_MAX_SIDE_PX / max(width, height, 1.0))
        return page.render(scale=scale).to_numpy()


def page_read(pdf: Pdf, index: int) -> tuple[str, str]:
    """The page's text and the engine that read it: pypdf, or pdfium when pypdf's text is empty or garbage."""
    text = pdf.pypdf_text(index)
    if pdf.reader is not None and letters(text) >= MIN_PAGE_LETTERS and text_garbage(text) < GARBAGE_SUSPECT:
        return text, ENGINE_PYPDF
    other = pdf.pdfium_text(index)
    if letters(other) >= MIN_PAGE_LETTERS and (
        letters(text) < MIN_PAGE_LETTERS or text_garbage(other) + GARBAGE_MARGIN < text_garbage(text)
    ):
        return other, ENGINE_PDFIUM
    if pdf.reader is None:
        return other, ENGINE_PDFIUM
    return text, ENGINE_PYPDF


# --- OCR ----------------------------------------------------------------------------------------


def _ocr_engine(options: Options) -> Any:
    if options.ocr_memory_mb:
        import resource

        # The OCR models need more address space than text parsing; the hard cap was set at start.
        memory = options.ocr_memory_mb * 1024 * 1024
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        resource.setrlimit(resource.RLIMIT_AS, (min(memory, hard) if hard > 0 else memory, hard))
    from rapidocr import RapidOCR

    return RapidOCR(params={"Global.log_level": "critical", "Global.use_cls": False})


def ocr_text(engine: Any, image: Any) -> str:
    result = engine(image)
    lines = [str(line) for line in (getattr(result, "txts", None) or ())]
    return text_clean("\n".join(lines))


# --- handlers -------------------------------------------------------------------------------------


def pdf_inspect(data: bytes, options: Options) -> dict[str, Any]:
    """Page count and the /Title metadata; refusal of files no engine opens, of blank files and of scans past the OCR page limit."""
    pdf = Pdf(data, options)
    try:
        return {**_inspect(pdf, options), "title": pdf.title()}
    finally:
        pdf.close()


def _inspect(pdf: Pdf, options: Options) -> dict[str, Any]:
    tally = TextTally(pdf.pages)
    ocr_pages = 0
    engines: set[str] = set()
    for index in range(pdf.pages):
        options.pages_read += 1
        text, engine = page_read(pdf, index)
        tally.add(text)
        if letters(text) >= MIN_PAGE_LETTERS:
            engines.add(engine)
        elif pdf.ocr_candidate(index, text):
            ocr_pages += 1
            if ocr_pages > options.ocr_max_pages:
                raise _too_many_ocr_pages(ocr_pages, options.ocr_max_pages)
        if tally.enough:
            break
    else:
        if ocr_pages == 0:
            raise _NO_TEXT
    if ocr_pages:
        engines.add(ENGINE_OCR)
    return {"pages": pdf.pages, "pages_estimated": False, "ocr_pages": ocr_pages, "engine": engine_label(engines)}


def pdf_parse(data: bytes, options: Options) -> dict[str, Any]:
    """Text blocks, one per page with text, read by pypdf, pdfium or OCR (see the module's docstring)."""
    pdf = Pdf(data, options)
    try:
        return _parse(pdf, options)
    finally:
        pdf.close()


def _parse(pdf: Pdf, options: Options) -> dict[str, Any]:
    texts: list[str] = []
    engines: list[str] = []
    ocr_needed: list[int] = []
    for index in range(pdf.pages):
        options.pages_read += 1
        text, engine = page_read(pdf, index)
        texts.append(text)
        engines.append(engine)
        if pdf.ocr_candidate(index, text):
            ocr_needed.append(index)
            if len(ocr_needed) > options.ocr_max_pages:
                raise _too_many_ocr_pages(len(ocr_needed), options.ocr_max_pages)
        options.progress("read", index + 1, pdf.pages)
    if ocr_needed:
        engine_ocr = _ocr_engine(options)
        for done, index in enumerate(ocr_needed, start=1):
            text = ocr_text(engine_ocr, pdf.render(index))
            options.pages_ocr += 1
            if letters(text) > letters(texts[index]):
                texts[index], engines[index] = text, ENGINE_OCR
            options.progress("ocr", done, len(ocr_needed))
    tally = TextTally(pdf.pages)
    blocks = []
    used: set[str] = set()
    for number, (text, engine) in enumerate(zip(texts, engines, strict=True), start=1):
        tally.add(text)
        if text:
            used.add(engine)
            blocks.append({"page": number, "heading": "", "level": 0, "kind": "page", "text": text})
    if not tally.enough:
        raise _OCR_FOUND_NOTHING if ocr_needed else _NO_TEXT
    options.progress("done", 1, 1)
    return {
        "pages": pdf.pages,
        "pages_estimated": False,
        "blocks": blocks,
        "ocr_pages": sum(engine == ENGINE_OCR for engine in engines),
        "engine": engine_label(used),
    }


def engine_label(engines: set[str]) -> str:
    """The engines that read a document, in a fixed order: "pypdf", "pdfium", "pypdf+ocr", ..."""
    return "+".join(engine for engine in ENGINES if engine in engines)
