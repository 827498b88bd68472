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

EXTENSIONS = {".pdf": DocumentType.PDF, ".docx": DocumentType.DOCX}
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
            f"filename must end in .pdf or .docx; got {name[:80]!r}.",
            code="unsupported_extension",
            hint="Upload a PDF (.pdf) or Word (.docx) file; convert other formats first.",
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
        raise ValidationError("The file is empty (0 bytes).", code="empty_file", hint="Upload a non-empty PDF or DOCX.")
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
    by_extension = EXTENSIONS[Path(filename).suffix.lower()]
    head = data[:1024]
    if head.lstrip(b"\x00\t\r\n ").startswith(PDF_MAGIC) or PDF_MAGIC in head:
        by_bytes: DocumentType | None = DocumentType.PDF
    elif data.startswith(ZIP_MAGIC):
        by_bytes = DocumentType.DOCX
    elif data.startswith(OLE2_MAGIC):
        if by_extension == DocumentType.DOCX:
            raise ValidationError(
                "This DOCX is password-protected (encrypted Office container).",
                code="encrypted_document",
                hint="Open it in Word, remove the password (File → Info → Protect Document), save and upload again.",
            )
        by_bytes = None
    else:
        by_bytes = None
    if by_bytes is None:
        raise UnsupportedMediaType(
            "The file is neither a PDF nor a DOCX (its bytes match neither format).",
            code="unsupported_file_type",
            hint="Upload a PDF or a Word .docx file; save .doc, .odt or images as PDF first.",
        )
    if by_bytes != by_extension:
        raise ValidationError(
            f"The file's content is {by_bytes.label} but its name ends in .{by_extension.value}.",
            code="extension_mismatch",
            hint=f"Rename the file to end in .{by_bytes.value}, or upload the right file.",
        )
    return by_bytes


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


def upload_validate(*, filename: str | None, data: bytes) -> UploadedFile:
    """Validate an upload's name, size, type and (for DOCX) zip structure; raises 4xx errors."""
    name = filename_clean(filename)
    size_check(len(data))
    content_type = file_type_detect(data, name)
    if content_type == DocumentType.DOCX:
        docx_precheck(data)
    return UploadedFile(filename=name, data=data, content_type=content_type)
