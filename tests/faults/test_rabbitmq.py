"""Celery on RabbitMQ (CELERY_BROKER_URL=amqp://...), the production broker option beside Redis.

Real parts: the machine's RabbitMQ (a virtual host of each test alone, deleted afterwards), this test's database,
the session's Redis and FalkorDB, `celery worker` subprocesses. The project's queues are quorum queues there; a
worker's unacked message (acks late, prefetch 1) goes back to its queue the moment the worker's connection dies,
and countdown/retry tasks wait in RabbitMQ (native delayed delivery), not in a worker's memory."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from celery import Celery

from billing.models import CreditEntry
from billing.services import credit_balance, credits_grant_admin
from exograph.core.broker import celery_queues, celery_transport_options
from exograph.core.models import Lease
from exograph.core.queues import Queue
from exograph.documents.models import Document, DocumentStatus
from exograph.documents.services.state import DOCUMENT_LEASE, EMBED_TASK
from exograph.graphs import store
from exograph.graphs.models import Graph
from tests.faults.conftest import (
    lines,
    rabbitmq_queue_types,
    rabbitmq_ready,
    session_stores,
    short_lease_env,
    tasks_via_rabbitmq,
    wait_until,
)

pytestmark = [pytest.mark.faults, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

TEXT = "\n\n".join(
    f"Section {i}. Ada Lovelace wrote about the Analytical Engine designed by Charles Babbage in London. "
    f"Her notes on Bernoulli numbers, part {i}, are read as the first published program."
    for i in range(60)
)
SHORT_TEXT = "\n\n".join(TEXT.split("\n\n")[:8])
# Bounds: model load and the 60-section document on a busy 2-core machine, once per worker.
RUNNING_BOUND, FINISH_BOUND = 180, 240
QUEUES = [q.value for q in Queue]


def rabbitmq_stores(broker_url: str) -> dict[str, str]:
    """start_worker's URLs: the session's Redis (results, locks, cache) and FalkorDB, RabbitMQ as the broker."""
    return {**session_stores(), "broker_url": broker_url}


def drop_graphs() -> None:
    for graph_id in Graph.objects.values_list("id", flat=True):
        store.store_drop(f"exo:{graph_id}")


def test_rabbitmq_worker_processes_an_uploaded_document_on_quorum_queues(
    alice, alice_client, rabbitmq_broker, start_worker
):
    credits_grant_admin(account=alice, amount=100, actor=None, note="tests")
    # One worker on all four queues (a worker declares the queues it consumes), like make run's.
    worker = start_worker(**rabbitmq_stores(rabbitmq_broker), queues=",".join(QUEUES), extra_env=short_lease_env())
    try:
        with tasks_via_rabbitmq(rabbitmq_broker):
            response = alice_client.post(
                "/api/v1/documents/", {"text": SHORT_TEXT, "title": "Lovelace notes"}, format="json"
            )
            assert response.status_code == 201, response.json()
            document_id, price = response.json()["id"], response.json()["credits_charged"]

            def finished() -> bool:
                assert worker.process.poll() is None, worker.log()[-3000:]
                return Document.objects.get(pk=document_id).status in (DocumentStatus.PROCESSED, DocumentStatus.FAILED)

            wait_until(finished, timeout=FINISH_BOUND, what="the document processed", interval=0.5)
        document = Document.objects.get(pk=document_id)
        assert document.status == DocumentStatus.PROCESSED, (document.failure_reason, worker.log()[-3000:])
        assert document.chunk_count > 0 and document.entity_count > 0, (document.chunk_count, document.entity_count)
        assert list(CreditEntry.objects.filter(reference__contains=document_id).values_list("kind", "amount")) == [
            ("charge", -price)
        ]
        log = worker.log()
        worker.stop()  # a message still unacked would be back on its queue now
        assert rabbitmq_ready(rabbitmq_broker, QUEUES) == {name: (0, 0) for name in QUEUES}  # every stage acked
        types = rabbitmq_queue_types(rabbitmq_broker)
        assert {name: types[name] for name in QUEUES} == {name: "quorum" for name in QUEUES}
        # Celery's native delayed delivery chain is declared as quorum queues as well.
        assert types["celery_delayed_0"] == types["celery_delayed_27"] == "quorum"
        assert "Global QoS is disabled" in log  # quorum queues refuse a global prefetch
        assert "direct exchange" not in log  # every queue can take countdown tasks without blocking
    finally:
        drop_graphs()


def test_rabbitmq_worker_sigkilled_mid_stage_its_message_is_redelivered_and_the_document_finishes_once(
    alice, alice_client, rabbitmq_broker, start_worker
):
    credits_grant_admin(account=alice, amount=100, actor=None, note="tests")
    env, urls = short_lease_env(), rabbitmq_stores(rabbitmq_broker)
    first = start_worker(**urls, queues="ingest,default", extra_env=env)
    try:
        with tasks_via_rabbitmq(rabbitmq_broker):
            response = alice_client.post("/api/v1/documents/", {"text": TEXT, "title": "Lovelace notes"}, format="json")
            assert response.status_code == 201, response.json()
            document_id, price = response.json()["id"], response.json()["credits_charged"]
            held = Lease.objects.filter(kind=DOCUMENT_LEASE, subject_id=document_id, step=EMBED_TASK).exclude(holder="")

            def stage_running() -> bool:
                assert first.process.poll() is None, first.log()[-3000:]
                return held.exists()

            wait_until(stage_running, timeout=RUNNING_BOUND, what="the embed stage running", interval=0.05)
            # The embed stage's message is with the worker, not acked (acks late): none ready, the worker consuming.
            assert rabbitmq_ready(rabbitmq_broker, ["ingest"]) == {"ingest": (0, 1)}
            os.killpg(first.process.pid, signal.SIGKILL)  # the worker and its pool children, mid-stage
            first.process.wait(timeout=10)
            assert Document.objects.get(pk=document_id).status == DocumentStatus.PROCESSING
            assert held.exists(), "the kill landed after the embed stage ended, not inside it"
            # The dead connection gave the message back at once: ready again, no visibility timeout to wait for.
            wait_until(
                lambda: rabbitmq_ready(rabbitmq_broker, ["ingest"]) == {"ingest": (1, 0)},
                timeout=30,
                what="the unacked message back on the ingest queue",
                interval=0.5,
            )

            # No celery beat here: no lease sweep resumes anything, only the redelivered message can finish it.
            second = start_worker(**urls, queues="ingest,default", extra_env=env)

            def finished() -> bool:
                assert second.process.poll() is None, second.log()[-3000:]
                return Document.objects.get(pk=document_id).status in (DocumentStatus.PROCESSED, DocumentStatus.FAILED)

            wait_until(finished, timeout=FINISH_BOUND, what="the interrupted document finished", interval=0.5)
        document = Document.objects.get(pk=document_id)
        assert document.status == DocumentStatus.PROCESSED, (document.failure_reason, second.log()[-3000:])
        assert f"Task {EMBED_TASK}[" in second.log()  # the redelivered embed message ran on the new worker
        entries = list(CreditEntry.objects.filter(reference__contains=document_id).values_list("kind", "amount"))
        assert entries == [("charge", -price)]  # processed and paid exactly once, nothing refunded
        assert credit_balance(account=alice) == 100 - price
        wait_until(
            lambda: not Lease.objects.filter(subject_id=document_id).exists(), timeout=30, what="the lease released"
        )
        second.stop()
        assert rabbitmq_ready(rabbitmq_broker, ["ingest"]) == {"ingest": (0, 0)}  # nothing left unacked
    finally:
        drop_graphs()


def send_retry_probe(broker_url: str, *, marker_dir: Path, countdown: float, send_countdown: float | None) -> None:
    """Queue tests.faults.retry_probe on the default queue through a producer configured like the service's."""
    sender = Celery("rabbitmq-sender", broker=broker_url, set_as_current=False)
    sender.conf.update(
        task_queues=celery_queues(broker_url),
        broker_transport_options=celery_transport_options(broker_url, visibility_timeout=0),
    )
    try:
        sender.send_task(
            "tests.faults.retry_probe",
            kwargs={"marker_dir": str(marker_dir), "countdown": countdown},
            queue=Queue.DEFAULT.value,
            countdown=send_countdown,
        )
    finally:
        sender.close()


def delayed_messages(broker_url: str) -> int:
    """Messages waiting in Celery's native delayed delivery queues (celery_delayed_0 .. celery_delayed_27)."""
    counts = rabbitmq_ready(broker_url, [f"celery_delayed_{level}" for level in range(28)])
    return sum(ready for ready, _ in counts.values())


def test_rabbitmq_countdown_and_retry_wait_in_the_broker_not_in_the_worker(rabbitmq_broker, short_tmp, start_worker):
    worker = start_worker(**rabbitmq_stores(rabbitmq_broker), queues="default")
    markers = short_tmp / "markers"
    markers.mkdir()
    # A retry in 10 s (research's run task retries with a countdown on a transient failure): the message waits in
    # RabbitMQ's delayed-delivery queues, not in the worker's memory (where it would hold a prefetch slot).
    send_retry_probe(rabbitmq_broker, marker_dir=markers, countdown=10, send_countdown=None)
    wait_until(lambda: lines(markers / "runs") >= 1, timeout=60, what="the probe's first run")
    wait_until(lambda: delayed_messages(rabbitmq_broker) == 1, timeout=30, what="the retry waiting in RabbitMQ")
    assert rabbitmq_ready(rabbitmq_broker, ["default"]) == {"default": (0, 1)}  # nothing ready, the worker free
    wait_until(lambda: lines(markers / "done") >= 1, timeout=60, what="the retried probe done")
    assert (markers / "runs").read_text().splitlines() == ["run 0", "run 1"]

    # A countdown under a second, given when sending (research_session_requeue sends RESEARCH_INGEST_POLL_SECONDS,
    # which tests set to 0.5) and on a retry: kombu's delayed routing key takes whole seconds, and rounding 0.5
    # down to 0 made the publish raise; the service's app sends it with one second.
    markers_short = short_tmp / "markers-short"
    markers_short.mkdir()
    from exograph.celery import app as celery_app

    with tasks_via_rabbitmq(rabbitmq_broker):
        celery_app.send_task(
            "tests.faults.retry_probe",
            kwargs={"marker_dir": str(markers_short), "countdown": 0.5},
            queue=Queue.DEFAULT.value,
            countdown=0.5,
        )
    wait_until(lambda: lines(markers_short / "done") >= 1, timeout=60, what="the sub-second countdown probe done")
    assert (markers_short / "runs").read_text().splitlines() == ["run 0", "run 1"], worker.log()[-3000:]
