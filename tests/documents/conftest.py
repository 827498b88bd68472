"""Fixtures for the documents tests: the real sample files and generated hostile ones."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from django.conf import settings


def fixtures_dir() -> Path:
    """The shared upload-test files: CI lays shared/ beside the clone. Missing is an error, never a skip."""
    path = settings.BASE_DIR.parent / "shared" / "fixtures" / "files"
    if not (path / "MANIFEST.md").is_file():
        raise RuntimeError(
            f"The document fixtures are missing: expected {path}/MANIFEST.md. "
            "Place a copy of shared/ beside the clone (its parent directory must contain shared/fixtures/files)."
        )
    return path


def fixture_bytes(relative: str) -> bytes:
    return (fixtures_dir() / relative).read_bytes()


@pytest.fixture(scope="session")
def fixture_path():  # type: ignore[no-untyped-def]
    def get(relative: str) -> Path:
        path = fixtures_dir() / relative
        assert path.is_file(), f"fixture {relative} is missing from {fixtures_dir()}"
        return path

    return get


MINIMAL_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/word/document.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>'
    "</Types>"
)
MINIMAL_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" '
    'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" '
    'Target="word/document.xml"/></Relationships>'
)
W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def docx_bytes(document_xml: str, *, extra: dict[str, bytes] | None = None) -> bytes:
    """A small DOCX package built in memory around the given word/document.xml."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", MINIMAL_CONTENT_TYPES)
        archive.writestr("_rels/.rels", MINIMAL_RELS)
        archive.writestr("word/document.xml", document_xml)
        for name, data in (extra or {}).items():
            archive.writestr(name, data)
    return buffer.getvalue()


def docx_with_paragraphs(*paragraphs: str) -> bytes:
    body = "".join(f"<w:p><w:r><w:t>{p}</w:t></w:r></w:p>" for p in paragraphs)
    return docx_bytes(f'<?xml version="1.0"?><w:document xmlns:w="{W_NS}"><w:body>{body}</w:body></w:document>')


def zip_bomb_docx() -> bytes:
    """A zip whose word/document.xml claims to be tiny-in/huge-out: 200 MB of zeros deflated."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("[Content_Types].xml", MINIMAL_CONTENT_TYPES)
        archive.writestr("_rels/.rels", MINIMAL_RELS)
        with archive.open("word/document.xml", "w", force_zip64=True) as part:
            block = b"\0" * (1024 * 1024)
            for _ in range(200):
                part.write(block)
    return buffer.getvalue()


def billion_laughs_docx() -> bytes:
    entities = '<!ENTITY lol "lol">' + "".join(
        f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">' for i in range(1, 10)
    )
    xml = (
        f'<?xml version="1.0"?><!DOCTYPE lolz [{entities}]>'
        f'<w:document xmlns:w="{W_NS}"><w:body><w:p><w:r><w:t>&lol9;</w:t></w:r></w:p></w:body></w:document>'
    )
    return docx_bytes(xml)


@pytest.fixture(autouse=True)
def _fresh_channel_layer():  # type: ignore[no-untyped-def]
    """A new channel layer per test: a layer's Redis connections belong to the event loop that made them."""
    from channels.layers import channel_layers

    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()
