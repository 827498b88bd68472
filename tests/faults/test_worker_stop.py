"""Stopping the worker: a task that fits the grace finishes; one cut short is requeued at once."""

from __future__ import annotations

import pytest

from exograph.core.supervisor import celery_worker_stop_steps
from tests.faults.conftest import broker_client, broker_urls, lines, send_probe, wait_until

pytestmark = [pytest.mark.faults, pytest.mark.worker]


def test_worker_stop_requeues_the_task_it_cuts_short_at_once(throwaway_store, short_tmp, start_worker):
    redis_url, broker_url = broker_urls(throwaway_store, tcp=False)
    worker = start_worker(redis_url=redis_url, broker_url=broker_url, stop_steps=celery_worker_stop_steps(1.0))
    markers = short_tmp / "markers"
    markers.mkdir()
    send_probe(broker_url, marker_dir=markers, run_seconds=20)
    wait_until(lambda: lines(markers / "started") >= 1, timeout=60, what="probe task started")

    worker.stop()  # the grace (1 s) is shorter than the task (20 s)

    assert worker.process.poll() is not None
    broker = broker_client(throwaway_store)
    try:
        # Back on the queue now, not in the unacked set waiting for the visibility timeout.
        assert (broker.llen("default"), broker.hlen("unacked")) == (1, 0), worker.log()[-4000:]
    finally:
        broker.close()
    assert lines(markers / "done") == 0
    start_worker(redis_url=redis_url, broker_url=broker_url)
    wait_until(lambda: lines(markers / "done") >= 1, timeout=120, what="requeued probe task done")
    assert (lines(markers / "started"), lines(markers / "done")) == (2, 1)


def test_worker_stop_lets_a_task_within_the_grace_finish(throwaway_store, short_tmp, start_worker):
    redis_url, broker_url = broker_urls(throwaway_store, tcp=False)
    worker = start_worker(redis_url=redis_url, broker_url=broker_url, stop_steps=celery_worker_stop_steps(60.0))
    markers = short_tmp / "markers"
    markers.mkdir()
    send_probe(broker_url, marker_dir=markers, run_seconds=3)
    wait_until(lambda: lines(markers / "started") >= 1, timeout=60, what="probe task started")

    worker.stop()

    assert worker.process.returncode == 0, worker.log()[-4000:]
    assert (lines(markers / "started"), lines(markers / "done")) == (1, 1)
    broker = broker_client(throwaway_store)
    try:
        assert (broker.llen("default"), broker.hlen("unacked")) == (0, 0)
    finally:
        broker.close()
