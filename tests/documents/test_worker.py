"""The ingest pipeline through a REAL Celery worker process and the real broker (not eager)."""

from __future__ import annotations

import base64

import pytest

from billing.services import credit_balance, credits_grant_admin
from exograph.core.scope import Scope
from exograph.documents.models import Document, DocumentStatus
from tests.documents.conftest import fixture_bytes
from tests.factories import search_entities
from tests.workers import database_url, session_stores, tasks_via_broker, wait_while_alive

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("drop_graph_stores")]


def test_upload_is_processed_by_a_real_worker(alice, alice_client, start_worker):
    worker = start_worker(
        **session_stores(), queues="ingest,default", concurrency=1, extra_env={"DATABASE_URL": database_url()}
    )
    credits_grant_admin(account=alice, amount=100, actor=None, note="tests")
    with tasks_via_broker():
        payload = {
            "file_content_base64": base64.b64encode(fixture_bytes("pdf/pm_naacl06-shinyama.pdf")).decode(),
            "filename": "naacl06.pdf",
        }
        response = alice_client.post("/api/v1/documents/", payload, format="json")
        assert response.status_code == 201, response.json()
        document_id = response.json()["id"]

        def status() -> str | None:
            return Document.objects.filter(id=document_id).values_list("status", flat=True).first()

        done = (DocumentStatus.PROCESSED, DocumentStatus.FAILED)
        # bounded wait: model load + 8 pages on a busy 2-core machine
        wait_while_alive(worker, lambda: status() in done, timeout=240, what="the document processed", interval=0.5)
        assert status() == DocumentStatus.PROCESSED, (status(), worker.log()[-3000:])
        assert "documents.document_index" in worker.log()
        hits = search_entities(user=alice, query="Information Extraction", scope=Scope.PRIVATE)
        assert any(hit["name"] == "Information Extraction" for hit in hits)
        assert credit_balance(account=alice) == 100 - 13
