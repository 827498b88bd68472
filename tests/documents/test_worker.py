"""The ingest pipeline through a REAL Celery worker process and the real broker (not eager)."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings

from billing.services import credit_balance, credits_grant_admin
from exograph.core.scope import Scope
from exograph.documents.models import Document, DocumentStatus
from exograph.graphs import store
from exograph.graphs.models import Graph
from tests.documents.conftest import fixture_bytes
from tests.factories import search_entities
from tests.faults.conftest import database_url, tasks_via_broker

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def celery_worker_process(tmp_path):
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "FALKORDB_URL": settings.FALKORDB_URL,
        "REDIS_URL": settings.REDIS_URL,
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "CELERY_TASK_ALWAYS_EAGER": "0",
        "DJANGO_SECRET_KEY": settings.SECRET_KEY,
        "EXOGRAPH_VAR_DIR": str(tmp_path / "worker-var"),
        "DJANGO_SECURE_SSL_REDIRECT": "0",
    }
    log = (tmp_path / "worker.log").open("w")
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "exograph",
            "worker",
            "-Q",
            "ingest,default",
            "--pool",
            "solo",
            "--concurrency",
            "1",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "-l",
            "info",
            "-n",
            f"docs-test-{os.getpid()}@%h",
        ],
        cwd=str(settings.BASE_DIR),
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        yield worker, Path(log.name)
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait(timeout=10)
        log.close()


def test_upload_is_processed_by_a_real_worker(alice, alice_client, celery_worker_process):
    worker, log_path = celery_worker_process
    credits_grant_admin(account=alice, amount=100, actor=None, note="tests")
    try:
        with tasks_via_broker():
            payload = {
                "file_content_base64": base64.b64encode(fixture_bytes("pdf/pm_naacl06-shinyama.pdf")).decode(),
                "filename": "naacl06.pdf",
            }
            response = alice_client.post("/api/v1/documents/", payload, format="json")
            assert response.status_code == 201, response.json()
            document_id = response.json()["id"]
            deadline = time.monotonic() + 240  # bounded wait: model load + 8 pages on a busy 2-core machine
            status = None
            while time.monotonic() < deadline:
                status = Document.objects.filter(id=document_id).values_list("status", flat=True).first()
                if status in (DocumentStatus.PROCESSED, DocumentStatus.FAILED):
                    break
                assert worker.poll() is None, log_path.read_text()[-3000:]
                time.sleep(0.5)
            assert status == DocumentStatus.PROCESSED, (status, log_path.read_text()[-3000:])
            assert "documents.document_index" in log_path.read_text()
            hits = search_entities(user=alice, query="Information Extraction", scope=Scope.PRIVATE)
            assert any(hit["name"] == "Information Extraction" for hit in hits)
            assert credit_balance(account=alice) == 100 - 13
    finally:
        for graph_id in Graph.objects.values_list("id", flat=True):
            store.store_drop(f"exo:{graph_id}")
