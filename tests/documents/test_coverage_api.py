"""Coverage (issue 14) end to end through the REST API: a scan is OCR'd and charged exactly its quote, the
engines that read a document are shown, and a scan past the OCR page limit is refused for free."""

from __future__ import annotations

import base64

import pytest

from billing.services import credit_balance
from exograph.documents.models import Document
from tests.documents.conftest import fixture_bytes
from tests.documents.test_coverage import scanned_pdf

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("drop_graph_stores")]

URL = "/api/v1/documents/"


def _b64(data: bytes, filename: str) -> dict[str, str]:
    return {"file_content_base64": base64.b64encode(data).decode(), "filename": filename}


def test_charge_for_an_ocr_document_equals_its_quote(alice_client, funded, django_capture_on_commit_callbacks):
    payload = _b64(fixture_bytes("pdf/oc_c02-22.pdf"), "scan.pdf")
    quote = alice_client.post(f"{URL}?dry_run=true", payload, format="json")
    assert quote.status_code == 200, quote.json()
    assert quote.json()["pages"] == 1 and quote.json()["credits_needed"] == 6  # 5 + 1 page, OCR or not
    with django_capture_on_commit_callbacks(execute=True):
        response = alice_client.post(URL, payload, format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["credits_charged"] == quote.json()["credits_needed"]
    document = alice_client.get(f"{URL}{response.json()['id']}/").json()
    assert document["status"] == "processed", document
    assert document["text_engine"] == "ocr" and document["ocr_pages"] == 1
    assert document["chunk_count"] >= 1 and document["entity_count"] >= 1
    assert credit_balance(account=funded) == 1000 - quote.json()["credits_needed"]  # nothing refunded or extra


def test_the_engine_that_read_a_document_is_shown(alice_client, funded, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = alice_client.post(URL, _b64(fixture_bytes("pdf/pm_jo.pdf"), "jo.pdf"), format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["text_engine"] == ""  # not parsed yet when the upload answers
    document = alice_client.get(f"{URL}{response.json()['id']}/").json()
    assert document["status"] == "processed", document
    assert document["text_engine"] == "pdfium" and document["ocr_pages"] == 0


def test_two_thousand_page_scan_is_refused_at_the_ocr_limit_and_costs_nothing(alice_client, funded):
    response = alice_client.post(URL, _b64(scanned_pdf(2000), "scan.pdf"), format="json")
    assert response.status_code == 400, response.json()
    error = response.json()["error"]
    assert error["code"] == "too_many_ocr_pages" and "100" in error["message"] and error["hint"]
    assert credit_balance(account=funded) == 1000
    assert not Document.objects.exists()


def test_encrypted_pdf_still_names_the_fix_and_costs_nothing(alice_client, funded):
    response = alice_client.post(
        URL, _b64(fixture_bytes("pdf/sf_libreoffice-writer-password.pdf"), "locked.pdf"), format="json"
    )
    assert response.status_code == 400
    assert response.json()["error"]["message"] == "encrypted PDF: remove the password and upload again."
    assert credit_balance(account=funded) == 1000
