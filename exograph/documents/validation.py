"""Upload validation: everything here runs before anything is charged or parsed.

File names, base64 payloads, server-side paths (file_path mode), the file type by its
bytes (agreeing with the extension), the size limit, and the DOCX zip pre-checks
(entry count, entry sizes, compression ratios, `<!DOCTYPE`/`<!ENTITY` in XML parts).
"""

from __future__ import annotations

import base64
import binascii
import io
import os
import re
import stat
import unicodedata
import zipfile
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from exograph.core.errors import PayloadTooLarge, PermissionDenied, UnsupportedMediaType, ValidationError
from exograph.documents.models import DocumentType

EXTENSIONS = {
    ".pdf": DocumentType.PDF,
    ".docx": DocumentType.DOCX,
    ".txt": DocumentType.TEXT,
    ".md": DocumentType.MARKDOWN,
    ".markdown": DocumentType.MARKDOWN,
}
# What the upload form says it takes: each kind once, in the words of the unsupported_extension hint.
ACCEPTED_LABEL = "PDF .pdf, Word .docx, plain text .txt, Markdown .md"
UTF8_BOM = b"\xef\xbb\xbf"
# Control characters a text file never holds (NUL and friends; tab, LF, CR, FF are fine).
_BINARY_BYTES = re.compile(rb"[\x00-\x08\x0e-\x1a\x1c-\x1f]")
PDF_MAGIC = b"%PDF-"
ZIP_MAGIC = b"PK\x03\x04"
OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_XML_SCAN_BLOCK = 64 * 1024
_DANGEROUS_XML = re.compile(rb"<!\s*(DOCTYPE|ENTITY)", re.IGNORECASE)


@dataclass(frozen=True)
class UploadedFile:
    """A validated upload: clean file name, bytes and the type decided from them."""

    filename: str
    data: bytes
    content_type: DocumentType
    # Provenance (text documents): the display title and where it was read from.
    title: str = ""
    source_url: str = ""


def filename_clean(raw: str | None) -> str:
    """A safe display file name, or ValidationError naming what to change."""
    hint = "Send a plain file name such as 'report.pdf' or 'notes.docx' (no folders, no control characters)."
    if raw is None or not raw.strip():
        raise ValidationError("filename is required and must not be empty.", code="invalid_filename", hint=hint)
    name = unicodedata.normalize("NFC", raw.strip())
    if any(unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") for ch in name):
        raise ValidationError("filename contains control characters.", code="invalid_filename", hint=hint)
    if "/" in name or "\\" in name or name in (".", "..") or name.startswith(".."):
        raise ValidationError(
            "filename must not contain a path ('/', '\\' or '..').", code="invalid_filename", hint=hint
        )
    limit = settings.DOCUMENTS_MAX_FILENAME_LENGTH
    if len(name) > limit:
        raise ValidationError(
            f"filename is {len(name)} characters long; the limit is {limit}.",
            code="invalid_filename",
            hint="Shorten the file name and upload again.",
        )
    suffix = Path(name).suffix.lower()
    if suffix not in EXTENSIONS or Path(name).stem.strip(" .") == "":
        raise ValidationError(
            f"filename must end in .pdf, .docx, .txt or .md; got {name[:80]!r}.",
            code="unsupported_extension",
            hint="Upload a PDF (.pdf), Word (.docx), plain-text (.txt) or Markdown (.md) file; convert other formats first.",
        )
    return name


def content_decode_base64(value: str) -> bytes:
    """Decode file_content_base64 strictly (standard or URL-safe alphabet, data: URLs accepted)."""
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(
            "file_content_base64 is empty.",
            code="invalid_base64",
            hint="Send the file's bytes base64-encoded in file_content_base64.",
        )
    text = value.strip()
    if text.startswith("data:") and "," in text[:200]:
        text = text.split(",", 1)[1]
    text = re.sub(r"\s+", "", text)
    if "-" in text or "_" in text:
        text = text.replace("-", "+").replace("_", "/")
    text += "=" * (-len(text) % 4)
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValidationError(
            "file_content_base64 is not valid base64.",
            code="invalid_base64",
            hint="Encode the file with standard base64 (e.g. `base64 -w0 report.pdf`) and send that text.",
        ) from exc


def size_check(size: int) -> None:
    """Refuse empty files and files over DOCUMENTS_MAX_BYTES."""
    if size == 0:
        raise ValidationError(
            "The file is empty (0 bytes).",
            code="empty_file",
            hint="Upload a file with content: a PDF, a Word .docx, a plain-text .txt or a Markdown .md.",
        )
    limit = settings.DOCUMENTS_MAX_BYTES
    if size > limit:
        raise PayloadTooLarge(
            f"The file is {size} bytes; the limit is {limit} bytes ({limit // (1024 * 1024)} MB).",
            code="file_too_large",
            hint="Split the document into smaller files and upload them separately.",
        )


def upload_path_resolve(file_path: str) -> Path:
    """Resolve a server-side file_path under EXOGRAPH_UPLOAD_ROOT; refuse anything that leaves it."""
    root_setting = settings.EXOGRAPH_UPLOAD_ROOT
    if not root_setting:
        raise PermissionDenied(
            "file_path uploads are disabled on this server.",
            code="file_path_disabled",
            hint="Send the file itself: multipart 'file', or JSON {file_content_base64, filename}.",
        )
    if not isinstance(file_path, str) or not file_path.strip() or "\x00" in file_path:
        raise ValidationError(
            "file_path is empty or invalid.", code="invalid_file_path", hint="Send a path under the upload root."
        )
    root = Path(root_setting).resolve()
    raw = Path(file_path.strip())
    if ".." in raw.parts:
        raise ValidationError(
            "file_path must not contain '..'.",
            code="invalid_file_path",
            hint=f"Send a path inside the upload root {root} without '..' segments.",
        )
    candidate = raw if raw.is_absolute() else root / raw
    outside = PermissionDenied(
        "file_path is outside the allowed upload root.",
        code="path_outside_root",
        hint=f"Place the file under {root} and send its path relative to that folder.",
    )
    if not candidate.absolute().is_relative_to(root):
        raise outside
    try:
        resolved = candidate.resolve(strict=True)
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise ValidationError(
            f"No file at {file_path[:200]!r} under the upload root.",
            code="file_not_found",
            hint=f"Check the path; it is resolved relative to {root}.",
        ) from exc
    except (OSError, RuntimeError) as exc:  # symlink loops and the like
        raise ValidationError(
            "file_path cannot be resolved.", code="invalid_file_path", hint="Send the path of a regular file."
        ) from exc
    if not resolved.is_relative_to(root):
        # A symlink (anywhere on the way) points out of the root.
        raise outside
    mode = os.stat(resolved).st_mode
    if not stat.S_ISREG(mode):
        raise ValidationError(
            "file_path is not a regular file (a folder, FIFO, socket or device).",
            code="not_a_regular_file",
            hint="Send the path of a regular PDF or DOCX file.",
        )
    return resolved


def upload_path_read(path: Path) -> bytes:
    """Read a resolved upload path, refusing oversize files before reading them."""
    size_check(path.stat().st_size)
    # O_NOFOLLOW|O_NONBLOCK: never follow a symlink swapped in after resolving, never block on a FIFO.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise ValidationError("file_path is not a regular file.", code="not_a_regular_file")
        data = handle.read(settings.DOCUMENTS_MAX_BYTES + 1)
    size_check(len(data))
    return data


def file_type_detect(data: bytes, filename: str) -> DocumentType:
    """The type decided by the bytes; it must agree with the extension."""
    suffix = Path(filename).suffix.lower()
    by_extension = EXTENSIONS[suffix]
    head = data[:1024]
    by_bytes: DocumentType | None = None
    if head.lstrip(b"\x00\t\r\n ").startswith(PDF_MAGIC) or PDF_MAGIC in head:
        by_bytes = DocumentType.PDF
    elif data.startswith(ZIP_MAGIC):
        by_bytes = DocumentType.DOCX
    if by_extension in (DocumentType.TEXT, DocumentType.MARKDOWN):
        # A PDF or Word file saved under .txt is a wrong name to its owner, not "binary bytes in a text file".
        if by_bytes == DocumentType.PDF or (by_bytes == DocumentType.DOCX and b"word/" in data):
            raise _extension_mismatch(by_bytes=by_bytes, suffix=suffix)
        text_decode(data)
        return by_extension
    if by_bytes is None and data.startswith(OLE2_MAGIC) and by_extension == DocumentType.DOCX:
        raise ValidationError(
            "This DOCX is password-protected (encrypted Office container).",
            code="encrypted_document",
            hint="Open it in Word, remove the password (File → Info → Protect Document), save and upload again.",
        )
    if by_bytes is None and _plain_text(data):
        raise ValidationError(
            f"The file's content is plain text but its name ends in {suffix}.",
            code="extension_mismatch",
            hint="Rename the file to end in .txt (or .md for Markdown) and upload it again; text is priced per "
            f"{settings.DOCUMENTS_TEXT_CHARS_PER_UNIT:,} characters.",
        )
    if by_bytes is None:
        raise UnsupportedMediaType(
            "The file is neither a PDF nor a DOCX (its bytes match neither format).",
            code="unsupported_file_type",
            hint="Upload a PDF or a Word .docx file; save .doc, .odt or images as PDF first.",
        )
    if by_bytes != by_extension:
        raise _extension_mismatch(by_bytes=by_bytes, suffix=suffix)
    return by_bytes


def _extension_mismatch(*, by_bytes: DocumentType, suffix: str) -> ValidationError:
    return ValidationError(
        f"The file's content is {by_bytes.label} but its name ends in {suffix}.",
        code="extension_mismatch",
        hint=f"Rename the file to end in .{by_bytes.value}, or upload the right file.",
    )


def _plain_text(data: bytes) -> bool:
    """Whether the bytes read as UTF-8 text of words (some white space, no binary bytes, no GIF header): what a .txt
    upload takes."""
    if _BINARY_BYTES.search(data) or data.startswith((b"GIF87a", b"GIF89a")) or not re.search(rb"\s", data):
        return False
    try:
        data.removeprefix(UTF8_BOM).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def text_decode(data: bytes) -> str:
    """The text of a .txt/.md upload: UTF-8 (a BOM is dropped), no binary bytes. Raises ValidationError (400)."""
    head = data[:1024]
    if head.startswith((PDF_MAGIC, ZIP_MAGIC, OLE2_MAGIC)) or _BINARY_BYTES.search(data):
        raise ValidationError(
            "The file is labelled as text but holds binary bytes (NUL or other control characters).",
            code="binary_text_file",
            hint="Upload the original PDF or DOCX under its own extension, or save the text as UTF-8 plain text.",
        )
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ValidationError(
            "The text file is UTF-16 encoded; text documents must be UTF-8.",
            code="invalid_text_encoding",
            hint="Save the file as UTF-8 (e.g. `iconv -f UTF-16 -t UTF-8 in.txt > out.txt`) and upload again.",
        )
    try:
        text = data.removeprefix(UTF8_BOM).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValidationError(
            f"The text file is not valid UTF-8 (invalid byte at position {exc.start}).",
            code="invalid_text_encoding",
            hint="Save the file as UTF-8 (e.g. `iconv -f latin1 -t UTF-8 in.txt > out.txt`) and upload again.",
        ) from exc
    if not text.strip():
        raise ValidationError(
            "The text is empty (only whitespace).", code="empty_text", hint="Send a document with some text in it."
        )
    limit = settings.DOCUMENTS_TEXT_MAX_CHARS
    if len(text) > limit:
        raise PayloadTooLarge(
            f"The text has {len(text)} characters; the limit is {limit}.",
            code="text_too_large",
            hint="Split the text into smaller documents and upload them separately.",
        )
    return text


def text_units(text: str) -> int:
    """Billing units of a text document: one per DOCUMENTS_TEXT_CHARS_PER_UNIT characters (at least one)."""
    per_unit = settings.DOCUMENTS_TEXT_CHARS_PER_UNIT
    return max(1, -(-len(text) // per_unit))


def _corrupt_docx(detail: str) -> ValidationError:
    return ValidationError(
        f"The DOCX file is damaged: {detail}.",
        code="corrupt_document",
        hint="Open and re-save it in Word or LibreOffice, then upload again.",
    )


def docx_precheck(data: bytes) -> None:
    """Zip-bomb and XXE checks on a DOCX, reading no more than the limits allow."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError) as exc:
        raise _corrupt_docx(str(exc) or "not a readable zip archive") from exc
    with archive:
        infos = archive.infolist()
        names = {info.filename for info in infos}
        if len(infos) > settings.DOCUMENTS_DOCX_MAX_ENTRIES:
            raise ValidationError(
                f"The DOCX has {len(infos)} parts; the limit is {settings.DOCUMENTS_DOCX_MAX_ENTRIES}.",
                code="docx_too_complex",
                hint="Save the document again without embedded objects, or export it as PDF.",
            )
        if "word/document.xml" not in names or "[Content_Types].xml" not in names:
            raise UnsupportedMediaType(
                "The zip file is not a Word document (word/document.xml or [Content_Types].xml is missing).",
                code="unsupported_file_type",
                hint="Upload a Word .docx file; other zip files are not documents.",
            )
        total = 0
        bomb_hint = "This looks like a zip bomb; upload the original document or export it as PDF."
        for info in infos:
            if info.file_size > settings.DOCUMENTS_DOCX_MAX_ENTRY_BYTES:
                raise ValidationError(
                    f"A part of the DOCX ({info.filename[:80]}) unpacks to {info.file_size} bytes; "
                    f"the limit is {settings.DOCUMENTS_DOCX_MAX_ENTRY_BYTES}.",
                    code="docx_decompression_limit",
                    hint=bomb_hint,
                )
            ratio = info.file_size / max(info.compress_size, 1)
            if info.file_size > 1024 * 1024 and ratio > settings.DOCUMENTS_DOCX_MAX_RATIO:
                raise ValidationError(
                    f"A part of the DOCX ({info.filename[:80]}) has compression ratio {ratio:.0f}:1; "
                    f"the limit is {settings.DOCUMENTS_DOCX_MAX_RATIO}:1.",
                    code="docx_decompression_limit",
                    hint=bomb_hint,
                )
            total += info.file_size
        if total > settings.DOCUMENTS_DOCX_MAX_TOTAL_BYTES:
            raise ValidationError(
                f"The DOCX unpacks to {total} bytes; the limit is {settings.DOCUMENTS_DOCX_MAX_TOTAL_BYTES}.",
                code="docx_decompression_limit",
                hint=bomb_hint,
            )
        for info in infos:
            if info.filename.lower().endswith((".xml", ".rels")):
                _xml_part_scan(archive, info)


def _xml_part_scan(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> None:
    """Refuse DTDs and entity declarations in an XML part, counting the bytes actually unpacked."""
    limit = settings.DOCUMENTS_DOCX_MAX_ENTRY_BYTES
    seen = 0
    tail = b""
    try:
        with archive.open(info) as part:
            while True:
                block = part.read(_XML_SCAN_BLOCK)
                if not block:
                    break
                seen += len(block)
                if seen > limit:
                    raise ValidationError(
                        f"A part of the DOCX ({info.filename[:80]}) unpacks to more than {limit} bytes.",
                        code="docx_decompression_limit",
                        hint="This looks like a zip bomb; upload the original document or export it as PDF.",
                    )
                if _DANGEROUS_XML.search(tail + block):
                    raise ValidationError(
                        f"The DOCX part {info.filename[:80]} declares a DTD or XML entities (<!DOCTYPE/<!ENTITY>).",
                        code="docx_xml_entities",
                        hint="Word never writes these; re-save the document in Word or LibreOffice and upload again.",
                    )
                tail = block[-16:]
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, NotImplementedError) as exc:
        raise _corrupt_docx(f"{info.filename[:80]} cannot be unpacked ({exc})") from exc


def upload_validate(*, filename: str | None, data: bytes, title: str = "", source_url: str = "") -> UploadedFile:
    """Validate an upload's name, size, type, (DOCX) zip structure, (text) encoding and provenance; raises 4xx."""
    name = filename_clean(filename)
    size_check(len(data))
    content_type = file_type_detect(data, name)
    if content_type == DocumentType.DOCX:
        docx_precheck(data)
    return UploadedFile(
        filename=name,
        data=data,
        content_type=content_type,
        title=title_clean(title),
        source_url=source_url_clean(source_url),
    )


def title_clean(raw: str | None) -> str:
    """A one-line display title (whitespace collapsed, control characters dropped), at most 500 characters."""
    text = "".join(ch for ch in (raw or "") if unicodedata.category(ch) not in ("Cc", "Cf", "Zl", "Zp") or ch in "\t\n")
    title = " ".join(unicodedata.normalize("NFC", text).split())
    if len(title) > 500:
        raise ValidationError(
            f"title is {len(title)} characters long; the limit is 500.", code="invalid_title", hint="Shorten the title."
        )
    return title


def source_url_clean(raw: str | None) -> str:
    """An http(s) URL of at most 2,000 characters, or ''. Raises ValidationError naming the fix."""
    url = (raw or "").strip()
    if not url:
        return ""
    from django.core.validators import URLValidator

    try:
        URLValidator(schemes=["http", "https"])(url)
    except Exception as exc:
        raise ValidationError(
            "source_url is not a valid http(s) URL.",
            code="invalid_source_url",
            hint="Send the full address, e.g. https://example.org/article, or leave source_url out.",
        ) from exc
    if len(url) > 2000:
        raise ValidationError(
            "source_url is longer than 2,000 characters.", code="invalid_source_url", hint="Send a shorter URL."
        )
    return url


def text_filename(title: str, content_type: DocumentType) -> str:
    """A safe file name for a text document sent as a JSON body: its title, slugged, with .md or .txt (a title that
    already ends in .txt or .md, like research's copy of an uploaded note.txt, keeps one: the format's)."""
    stem = re.sub(r"[^\w.-]+", "-", title, flags=re.UNICODE)
    stem = re.sub(r"\.(txt|md)$", "", stem, flags=re.IGNORECASE).strip("-.")[:120] or "text"
    return stem + (".md" if content_type == DocumentType.MARKDOWN else ".txt")
