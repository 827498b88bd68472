"""The pipeline when things go away or go wrong: graphs deleted under queued work, unprocessed deletes,
transient provider failures retried by Celery, permanent ones not, LLM outages recorded on the document."""

from __future__ import annotations

import base64
import json
import logging
import threading

import pytest
from django.db import connection
from django.test import override_settings

from billing.services import credit_balance
from exograph.core.errors import ServiceUnavailable, TransientError
from exograph.core.scope import Scope
from exograph.documents.models import Document, DocumentStatus
from exograph.documents.services import document_stage_embed, document_stage_parse
from exograph.documents.tasks import MAX_RETRIES, document_parse_task
from exograph.graphs import store
from exograph.graphs.models import Graph
from exograph.graphs.services import graph_delete
from tests.documents.conftest import fixture_bytes
from tests.factories import search_entities
from tests.fakes.http import Reply
from tests.fakes.llm_chat import FakeOpenAIChatServer

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("drop_graph_stores")]

URL = "/api/v1/documents/"
SMALL_PDF = "pdf/sf_pdflatex-4-pages.pdf"  # 4 pages: 9 credits


def _b64(name: str) -> dict[str, str]:
    return {"file_content_base64": base64.b64encode(fixture_bytes(name)).decode(), "filename": name.split("/")[-1]}


def _queued(client) -> dict[str, str]:
    """Upload without running the on-commit pipeline start: the document stays queued (pending)."""
    response = client.post(URL, _b64(SMALL_PDF), format="json")
    assert response.status_code == 201, response.json()
    return response.json()


# --- item 5: deleted graphs and unprocessed deletes ------------------------------------------------


def test_graph_deleted_while_its_document_is_queued_refunds_and_the_worker_finds_nothing(
    alice_client, charlie_client, funded, charlie, caplog
):
    document = _queued(alice_client)
    theirs = _queued(charlie_client)  # charlie's own queued document must keep its charge
    assert credit_balance(account=funded) == 991
    assert alice_client.delete(f"/api/v1/graphs/{document['graph_id']}/").status_code == 204
    assert credit_balance(account=funded) == 1000  # the never-done work is refunded
    assert credit_balance(account=charlie) == 991
    with caplog.at_level(logging.INFO, logger="exograph.documents.services"):
        document_parse_task(document["id"])  # the queued task runs after all: nothing to do, no error
    assert document["id"] in caplog.text
    assert credit_balance(account=funded) == 1000
    assert not Document.objects.filter(id=document["id"]).exists()
    assert Document.objects.get(id=theirs["id"]).status == DocumentStatus.PENDING


@pytest.mark.django_db(transaction=True)
def test_graph_deleted_while_a_stage_runs_stops_quietly_and_refunds(
    alice, alice_client, funded, openai_embeddings, caplog
):
    deleted = threading.Event()

    def handle(request):  # the embedding call is in flight when the owner deletes the graph
        if not deleted.is_set():
            try:
                graph = Graph.objects.get(owner=alice, is_default=True)
                graph_delete(actor=alice, graph_id=graph.id)
            finally:
                connection.close()
                deleted.set()
        return Reply(503, {"error": {"message": "overloaded", "type": "server_error"}})

    openai_embeddings.handle = handle  # type: ignore[method-assign]
    with caplog.at_level(logging.INFO):
        response = alice_client.post(URL, _b64(SMALL_PDF), format="json")  # on commit: the eager pipeline runs
    assert response.status_code == 201, response.json()
    assert deleted.is_set()
    assert not Document.objects.filter(id=response.json()["id"]).exists()
    assert credit_balance(account=funded) == 1000
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []  # no DoesNotExist
    assert response.json()["id"] in caplog.text  # the worker logged the vanished id


def test_deleting_an_unprocessed_document_refunds_like_cancel(alice_client, funded):
    document = _queued(alice_client)
    assert credit_balance(account=funded) == 991
    assert alice_client.delete(f"{URL}{document['id']}/").status_code == 204
    assert credit_balance(account=funded) == 1000
    assert document_stage_parse(document_id=document["id"]) is False  # the pipeline stops
    assert alice_client.get(f"{URL}{document['id']}/").status_code == 404


def test_deleting_a_cancelled_document_does_not_refund_twice(alice_client, funded):
    document = _queued(alice_client)
    assert alice_client.post(f"{URL}{document['id']}/cancel/").status_code == 200
    assert alice_client.delete(f"{URL}{document['id']}/").status_code == 204
    assert credit_balance(account=funded) == 1000


def test_deleting_a_document_mid_pipeline_refunds(alice_client, funded):
    document = _queued(alice_client)
    assert document_stage_parse(document_id=document["id"]) is True  # now processing
    assert alice_client.delete(f"{URL}{document['id']}/").status_code == 204
    assert credit_balance(account=funded) == 1000
    assert document_stage_embed(document_id=document["id"]) is False


# --- item 20: transient failures retried with backoff, permanent ones not --------------------------

OVERLOADED = {"error": {"message": "overloaded", "type": "server_error"}}


def _run(client, capture, payload=None) -> dict[str, object]:
    with capture(execute=True):
        response = client.post(URL, payload or _b64(SMALL_PDF), format="json")
    assert response.status_code == 201, response.json()
    return dict(client.get(f"{URL}{response.json()['id']}/").json())


def test_embedding_provider_failing_a_few_times_is_retried_and_the_document_processed(
    alice_client, funded, openai_embeddings, django_capture_on_commit_callbacks
):
    openai_embeddings.fail_next(503, OVERLOADED, times=3)
    document = _run(alice_client, django_capture_on_commit_callbacks)
    assert document["status"] == "processed", document
    assert len(openai_embeddings.embedding_requests) > 3  # the three failures, then the real work
    assert credit_balance(account=funded) == 991  # charged once, not refunded


def test_embedding_provider_down_past_the_retries_fails_and_refunds(
    alice_client, funded, openai_embeddings, django_capture_on_commit_callbacks
):
    openai_embeddings.fail_next(503, OVERLOADED, times=100)
    document = _run(alice_client, django_capture_on_commit_callbacks)
    assert document["status"] == "failed" and document["failure"]["stage"] == "embed"
    assert "503" in document["failure"]["reason"]
    assert len(openai_embeddings.embedding_requests) == MAX_RETRIES + 1  # one per attempt
    assert credit_balance(account=funded) == 1000


def test_permanent_embedding_error_is_not_retried(
    alice_client, funded, openai_embeddings, django_capture_on_commit_callbacks
):
    openai_embeddings.fail_next(400, {"error": {"message": "bad model", "type": "invalid_request_error"}}, times=100)
    document = _run(alice_client, django_capture_on_commit_callbacks)
    assert document["status"] == "failed" and document["failure"]["stage"] == "embed"
    assert len(openai_embeddings.embedding_requests) == 1
    assert credit_balance(account=funded) == 1000


LLM_GOOD = json.dumps(
    {
        "entities": [
            {"name": "Quillfeather Institute", "type": "ORGANIZATION", "description": "Writes blind text."},
            {"name": "Blind Text", "type": "CONCEPT", "description": "Filler text."},
        ],
        "relations": [{"source": "Quillfeather Institute", "target": "Blind Text", "type": "WRITES"}],
    }
)


@pytest.fixture
def llm(settings):
    with FakeOpenAIChatServer() as server:
        settings.DOCUMENTS_EXTRACTOR = "llm"
        settings.LLM_BASE_URL = server.base_url
        settings.LLM_API_KEY = server.api_key
        settings.LLM_MODEL = "fake-model"
        settings.LLM_MAX_RETRIES = 0  # the counts below are the stage's own retries, not the SDK's
        server.default = (200, LLM_GOOD)
        yield server


def test_llm_failing_a_few_times_is_retried_and_the_document_extracted_by_it(
    alice_client, funded, llm, django_capture_on_commit_callbacks
):
    for _ in range(3):
        llm.reply("", status=503)
    document = _run(alice_client, django_capture_on_commit_callbacks)
    assert document["status"] == "processed", document
    assert document["warnings"] == []
    assert document["entity_count"] == 2  # every passage by the LLM: no silent offline fallback
    assert len(llm.requests) == 3 + document["chunk_count"]  # three refused attempts, then each passage once
    hits = search_entities(user=funded, query="Quillfeather Institute", scope=Scope.PRIVATE)
    assert hits and hits[0]["name"] == "Quillfeather Institute"
    assert credit_balance(account=funded) == 991


def test_llm_down_past_the_retries_fails_and_refunds(alice_client, funded, llm, django_capture_on_commit_callbacks):
    llm.default = (503, "")
    document = _run(alice_client, django_capture_on_commit_callbacks)
    assert document["status"] == "failed" and "LLM" in document["failure"]["reason"]
    assert len(llm.requests) == MAX_RETRIES + 1  # each attempt stops at the first refused passage
    assert credit_balance(account=funded) == 1000


def test_llm_refusal_is_not_retried_and_is_recorded_on_the_document(
    alice_client, funded, llm, django_capture_on_commit_callbacks
):
    llm.default = (401, "")
    document = _run(alice_client, django_capture_on_commit_callbacks)
    assert document["status"] == "processed"  # the offline extractor did the passages
    assert [w["code"] for w in document["warnings"]] == ["llm_extractor_fallback"]
    assert "401" in document["warnings"][0]["message"]
    assert len(llm.requests) == 1
    listed = alice_client.get(URL).json()["results"][0]
    assert listed["id"] == document["id"]


def test_graph_store_unreachable_is_a_transient_error():
    with override_settings(FALKORDB_URL="redis://127.0.0.1:9"), pytest.raises(TransientError) as caught:
        store.ro_query("exo:nowhere", "RETURN 1")  # nothing listens on the discard port
    assert isinstance(caught.value, ServiceUnavailable) and caught.value.status == 503
