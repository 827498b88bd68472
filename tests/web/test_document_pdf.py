"""The document viewer's PDF pages (issue 27 §1): a processed PDF keeps its original file for pdf.js, served to
its owner only (anyone else: 404), deleted with the document; the viewer page carries pdf.js (static files from
npm, its worker allowed by the CSP as 'self') and opens at ?page=N."""

from __future__ import annotations

import base64

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from billing.services import credits_grant_admin
from exograph.documents.models import Document, DocumentOriginal
from tests.documents.conftest import fixture_bytes

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("drop_graph_stores")]
URL = "/api/v1/documents/"
SMALL_PDF = "pdf/sf_pdflatex-4-pages.pdf"  # 4 pages


@pytest.fixture
def pdf_document(alice, alice_client, django_capture_on_commit_callbacks) -> Document:  # type: ignore[no-untyped-def]
    """alice's SMALL_PDF, uploaded and processed (eager pipeline)."""
    credits_grant_admin(account=alice, amount=1000, actor=None, note="tests")
    upload = SimpleUploadedFile("four-pages.pdf", fixture_bytes(SMALL_PDF), content_type="application/pdf")
    with django_capture_on_commit_callbacks(execute=True):
        response = alice_client.post(URL, {"file": upload}, format="multipart")
    assert response.status_code == 201, response.json()
    document = Document.objects.get(pk=response.json()["id"])
    assert document.status == "processed", document.failure_reason
    return document


def test_a_processed_pdf_keeps_its_original_and_serves_it_to_its_owner_only(  # type: ignore[no-untyped-def]
    client, alice, charlie, pdf_document
) -> None:
    kept = DocumentOriginal.objects.get(document=pdf_document)
    assert bytes(kept.data) == fixture_bytes(SMALL_PDF)
    url = f"/documents/{pdf_document.id}/file/"
    assert client.get(url).status_code == 302  # a login first
    client.force_login(charlie)
    assert client.get(url).status_code == 404
    client.force_login(alice)
    response = client.get(url)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/pdf"
    assert response["Content-Disposition"] == 'inline; filename="four-pages.pdf"'
    assert "no-store" in response["Cache-Control"]
    assert response.content == fixture_bytes(SMALL_PDF)
    assert client.post(url).status_code in (404, 405)  # the action route does not take it either
    assert DocumentOriginal.objects.filter(document=pdf_document).exists()


def test_the_viewer_draws_the_asked_pdf_page_with_pdfjs_under_the_csp(client, alice, pdf_document) -> None:  # type: ignore[no-untyped-def]
    client.force_login(alice)
    response = client.get(f"/documents/{pdf_document.id}/", {"page": 3})
    html = response.content.decode()
    assert 'id="pdf-page"' in html and 'data-page="3"' in html
    assert f'data-file="/documents/{pdf_document.id}/file/"' in html
    assert 'data-pdfjs="/static/vendor/pdfjs/build/pdf.min.mjs"' in html
    assert 'data-worker="/static/vendor/pdfjs/build/pdf.worker.min.mjs"' in html
    assert '<script type="module" src="/static/js/document_pdf.js"></script>' in html
    assert 'rel="prev" href="?page=2"' in html and 'rel="next" href="?page=4"' in html  # keyboard: real links
    csp = response["Content-Security-Policy"]
    assert "worker-src 'self'" in csp and "script-src 'self'" in csp and "unsafe-eval" not in csp
    # A page past the end is the last page; no page is the first.
    assert 'data-page="4"' in client.get(f"/documents/{pdf_document.id}/", {"page": 99}).content.decode()
    assert 'data-page="1"' in client.get(f"/documents/{pdf_document.id}/").content.decode()


def test_deleting_the_document_deletes_its_original(client, alice, alice_client, pdf_document) -> None:  # type: ignore[no-untyped-def]
    assert alice_client.delete(f"{URL}{pdf_document.id}/").status_code == 204
    assert not DocumentOriginal.objects.filter(document=pdf_document).exists()
    client.force_login(alice)
    assert client.get(f"/documents/{pdf_document.id}/file/").status_code == 404


def test_a_text_document_keeps_no_original_and_shows_no_pdf_view(  # type: ignore[no-untyped-def]
    client, alice, alice_client, django_capture_on_commit_callbacks
) -> None:
    credits_grant_admin(account=alice, amount=100, actor=None, note="tests")
    payload = {"file_content_base64": base64.b64encode(b"Qubits hold quantum states.\n").decode(), "filename": "q.txt"}
    with django_capture_on_commit_callbacks(execute=True):
        response = alice_client.post(URL, payload, format="json")
    assert response.status_code == 201, response.json()
    document_id = response.json()["id"]
    assert Document.objects.get(pk=document_id).status == "processed"
    assert not DocumentOriginal.objects.filter(document_id=document_id).exists()
    client.force_login(alice)
    assert 'id="pdf-page"' not in client.get(f"/documents/{document_id}/").content.decode()
    assert client.get(f"/documents/{document_id}/file/").status_code == 404
