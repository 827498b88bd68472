"""A PDF uploaded under a generic file name ("document.pdf", "Scan_0001.pdf") is titled by its own /Title."""

from __future__ import annotations

import base64
import io

import pytest

from exograph.documents.models import Document
from exograph.documents.titles import filename_generic, metadata_title
from tests.documents.conftest import many_pages_pdf

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("drop_graph_stores")]

URL = "/api/v1/documents/"
HARBOUR = "Annual Survey of the Kestrel Bay Harbour Moorings"


def _pdf_titled(title: str) -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(many_pages_pdf(2, text="Moorings were inspected in May."))))
    writer.add_metadata({"/Title": title})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _send(client, data: bytes, filename: str, **extra: object):  # type: ignore[no-untyped-def]
    body = {"file_content_base64": base64.b64encode(data).decode(), "filename": filename, **extra}
    return client.post(URL, body, format="json")


@pytest.mark.parametrize("filename", ["document.pdf", "Scan_0001.pdf", "download (2).pdf"])
def test_a_generic_file_name_gives_way_to_the_pdfs_own_title(alice_client, funded, filename):  # type: ignore[no-untyped-def]
    response = _send(alice_client, _pdf_titled(HARBOUR), filename)
    assert response.status_code == 201, response.json()
    assert response.json()["title"] == HARBOUR and response.json()["filename"] == filename
    assert Document.objects.get(pk=response.json()["id"]).title == HARBOUR


def test_a_descriptive_file_name_and_a_given_title_are_kept(alice_client, funded):  # type: ignore[no-untyped-def]
    named = _send(alice_client, _pdf_titled(HARBOUR), "kestrel-moorings-2026.pdf").json()
    assert named["title"] == "kestrel-moorings-2026.pdf"
    given = _send(alice_client, _pdf_titled("Another harbour"), "document.pdf", title="Moorings, my copy").json()
    assert given["title"] == "Moorings, my copy"


@pytest.mark.parametrize("placeholder", ["Binder1.pdf", "Untitled", "Microsoft Word - Document1", "notes.txt", "7"])
def test_a_placeholder_metadata_title_leaves_the_file_name(alice_client, funded, placeholder):  # type: ignore[no-untyped-def]
    body = _send(alice_client, _pdf_titled(placeholder), "document.pdf").json()
    assert body["title"] == "document.pdf"


def test_what_counts_as_generic():  # type: ignore[no-untyped-def]
    assert all(map(filename_generic, ["scan0001.pdf", "Document (3).pdf", "v2.pdf", "3f9a0c1d2e7b.pdf"]))
    assert not any(map(filename_generic, ["annual-report-2025.pdf", "dmca.pdf", "deadbeefcafe.pdf"]))
    assert metadata_title("Microsoft Word - Minutes of May.doc") == "Minutes of May"
