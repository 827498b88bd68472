"""Fixtures for the documents tests: the real sample files and generated hostile ones."""

from __future__ import annotations

import io
import random
import string
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


def many_pages_pdf(pages: int, *, text: str = "Page text for the page limit test.") -> bytes:
    """A valid PDF of `pages` pages built by hand (fast even for 100,000): all pages share one text stream."""
    objects: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [" + b" ".join(b"%d 0 R" % (5 + i) for i in range(pages)) + b"] /Count %d >>" % pages,
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    content = b"BT /F1 12 Tf 72 720 Td (" + text.encode() + b") Tj ET"
    objects.append(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>"
    objects.extend(page for _ in range(pages))
    return pdf_of_objects(objects)


def pdf_of_objects(objects: list[bytes]) -> bytes:
    """A PDF file of these numbered objects (1 the catalog), with its cross-reference table and trailer."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def five_letter_paragraphs(count: int, *, words: int = 1000, seed: int = 8) -> list[str]:
    """`count` paragraphs of `words` random five-letter words: words * 6 - 1 characters each (not a zip bomb)."""
    rng = random.Random(seed)
    letters = string.ascii_lowercase
    return [" ".join("".join(rng.choices(letters, k=5)) for _ in range(words)) for _ in range(count)]


def docx_declaring_pages(paragraphs: list[str], *, pages: int) -> bytes:
    """A DOCX of the given paragraphs whose docProps/app.xml declares `pages` pages."""
    body = "".join(f"<w:p><w:r><w:t>{p}</w:t></w:r></w:p>" for p in paragraphs)
    app = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        '<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties">'
        f"<Pages>{pages}</Pages><Words>1</Words></Properties>"
    )
    return docx_bytes(
        f'<?xml version="1.0"?><w:document xmlns:w="{W_NS}"><w:body>{body}</w:body></w:document>',
        extra={"docProps/app.xml": app.encode()},
    )


@pytest.fixture
def funded(alice, bob, charlie, fund):  # type: ignore[no-untyped-def]
    """alice, bob and charlie with 1,000 credits each; returns alice."""
    for user in (alice, bob, charlie):
        fund(user, 1000)
    return alice


@pytest.fixture(autouse=True)
def _eager_tasks_retry_like_a_worker():  # type: ignore[no-untyped-def]
    """Eager tasks retry as a worker's would. With eager propagation on, Celery raises a task's Retry to
    the caller instead of running the retry (celery.app.trace: on_error re-raises when propagating)."""
    from exograph.celery import app

    previous = app.conf.task_eager_propagates
    app.conf.task_eager_propagates = False
    yield
    app.conf.task_eager_propagates = previous


def web_upload_quote(client, data: dict, **kwargs):  # type: ignore[no-untyped-def, type-arg]
    """POST the web upload form's first step; returns (response, the Confirm form's fields or None)."""
    import re

    response = client.post("/documents/", data, **kwargs)
    html = response.content.decode() if response.status_code == 200 else ""
    form = re.search(r'<form[^>]*id="confirm-form".*?</form>', html, flags=re.S)
    if form is None:
        return response, None
    fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', form.group(0)))
    fields["csrfmiddlewaretoken"] = fields.get("csrfmiddlewaretoken", "")
    return response, fields


def web_upload(client, data: dict, **kwargs):  # type: ignore[no-untyped-def, type-arg]
    """The web upload as a person does it: choose the file (the quote), then Confirm. Returns the last response
    (the quote step's own when it refused the file)."""
    response, fields = web_upload_quote(client, data)
    if fields is None:
        return response
    return client.post("/documents/", fields, **kwargs)
