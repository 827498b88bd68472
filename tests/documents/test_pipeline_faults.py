"""The pipeline when things go away or go wrong: graphs deleted under queued work, unprocessed deletes,
transient provider failures retried by Celery, permanent ones not, LLM outages recorded on the document."""

from __future__ import annotations

import base64
import logging
import threading

import pytest
from django.db import connection

from billing.services import credit_balance, credits_grant_admin
from exograph.documents.models import Document, DocumentStatus
from exograph.documents.services import document_stage_embed, document_stage_parse
from exograph.documents.tasks import document_parse_task
from exograph.graphs import store
from exograph.graphs.models import Graph
from exograph.graphs.services import graph_delete
from tests.documents.conftest import fixture_bytes
from tests.fakes.http import Reply

pytestmark = pytest.mark.django_db

URL = "/api/v1/documents/"
SMALL_PDF = "pdf/sf_pdflatex-4-pages.pdf"  # 4 pages: 9 credits


@pytest.fixture(autouse=True)
def _drop_graph_stores():
    yield
    for graph_id in Graph.objects.values_list("id", flat=True):
        store.store_drop(f"exo:{graph_id}")


@pytest.fixture
def funded(alice, charlie):
    for user in (alice, charlie):
        credits_grant_admin(account=user, amount=1000, actor=None, note="tests")
    return alice


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
