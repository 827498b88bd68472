"""Kill FalkorDB while a document is being ingested: the write stage meets the store down and Celery retries it
with backoff; once the store is back (same data directory, AOF) the document is processed, paid once, the graph
data written before the crash is intact, and this process (the "web") searches again without a restart.

Real parts: a prefork `celery worker` on this test's database and the session's broker; the graph store is a
throwaway FalkorDB of this test (killed with SIGKILL, restarted on the same socket)."""

from __future__ import annotations

import signal

import pytest
from django.conf import settings

from billing.models import CreditEntry
from billing.services import credit_balance, credits_grant_admin
from exograph.core.embedded import EmbeddedFalkorDB
from exograph.core.models import Lease
from exograph.core.scope import Scope
from exograph.documents.models import Document, DocumentStatus
from exograph.documents.services.state import DOCUMENT_LEASE, EMBED_TASK
from exograph.graphs.services import graph_create
from tests.faults.conftest import database_url, tasks_via_broker, wait_until
from tests.graphs.conftest import QUANTUM_ENTITIES, QUANTUM_RELATIONS, QUANTUM_TEXTS

pytestmark = [pytest.mark.faults, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

TEXT = "\n\n".join(
    f"Part {i}. Rosalind Franklin made X-ray images of DNA at King's College London; Photo 51 showed its helix."
    for i in range(40)
)


@pytest.fixture
def own_graph_store(settings, throwaway_store: EmbeddedFalkorDB) -> EmbeddedFalkorDB:
    settings.FALKORDB_URL = throwaway_store.url
    settings.FALKORDB_SOCKET_TIMEOUT = 3.0
    return throwaway_store


def test_graph_store_killed_during_ingest_the_document_is_processed_once_and_data_survives(
    alice, alice_client, write_doc, own_graph_store, start_worker
):
    credits_grant_admin(account=alice, amount=100, actor=None, note="tests")
    earlier = graph_create(actor=alice, name="Q", scope=Scope.PRIVATE)
    write_doc(earlier, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES, relations=QUANTUM_RELATIONS)
    env = {"DATABASE_URL": database_url(), "FALKORDB_URL": own_graph_store.url, "FALKORDB_SOCKET_TIMEOUT": "3"}
    worker = start_worker(
        redis_url=settings.REDIS_URL, broker_url=settings.CELERY_BROKER_URL, queues="ingest,default", extra_env=env
    )
    with tasks_via_broker():
        response = alice_client.post("/api/v1/documents/", {"text": TEXT, "title": "Franklin"}, format="json")
        assert response.status_code == 201, response.json()
        document_id, price = response.json()["id"], response.json()["credits_charged"]

        def embedding() -> bool:
            assert worker.process.poll() is None, worker.log()[-3000:]
            return Lease.objects.filter(kind=DOCUMENT_LEASE, subject_id=document_id, step=EMBED_TASK).exists()

        wait_until(embedding, timeout=180, what="the embed stage running", interval=0.05)
        assert own_graph_store.process is not None
        own_graph_store.process.send_signal(signal.SIGKILL)  # before the graph write
        own_graph_store.process.wait(timeout=10)
        down = alice_client.get("/api/v1/entities/search", {"query": "qubit"})
        assert down.status_code == 503 and down.json()["error"]["code"] == "graph_store_unavailable"
        wait_until(  # the write stage meets the store down; its task retries with backoff
            lambda: "hit a transient error" in worker.log(), timeout=180, what="the write stage meeting the store down"
        )
        own_graph_store.start()

        wait_until(
            lambda: Document.objects.get(pk=document_id).status in (DocumentStatus.PROCESSED, DocumentStatus.FAILED),
            timeout=180,
            what="the document finished",
            interval=0.5,
        )
        document = Document.objects.get(pk=document_id)
        assert document.status == DocumentStatus.PROCESSED, (document.failure_reason, worker.log()[-3000:])
        entries = list(CreditEntry.objects.filter(reference__contains=document_id).values_list("kind", "amount"))
        assert entries == [("charge", -price)]  # paid once, never refunded and charged again
        assert credit_balance(account=alice) == 100 - price
        # This process never restarted: its searches reach the restarted store, old data and new.
        old = alice_client.get("/api/v1/entities/search", {"query": "qubit"})
        assert old.status_code == 200 and old.json()["results"][0]["name"] == "Qubit"
        new = alice_client.get("/api/v1/entities/search", {"query": "Rosalind Franklin"})
        assert new.status_code == 200 and new.json()["results"], new.json()
