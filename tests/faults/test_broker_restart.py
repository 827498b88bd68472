"""The worker survives its broker (the embedded FalkorDB/Redis) crashing and restarting under a running task."""

from __future__ import annotations

import signal
import time

import pytest

from tests.faults.conftest import broker_client, broker_urls, lines, send_probe, wait_until

pytestmark = [pytest.mark.faults, pytest.mark.worker]


@pytest.mark.parametrize("tcp", [False, True], ids=["unix-socket", "tcp"])
def test_worker_survives_broker_crash_mid_task_and_the_task_completes_once(tcp, request, short_tmp, start_worker):
    server = request.getfixturevalue("throwaway_tcp_store" if tcp else "throwaway_store")
    redis_url, broker_url = broker_urls(server, tcp=tcp)
    worker = start_worker(redis_url=redis_url, broker_url=broker_url)
    markers = short_tmp / "markers"
    markers.mkdir()
    send_probe(broker_url, marker_dir=markers, run_seconds=6)
    wait_until(lambda: lines(markers / "started") >= 1, timeout=60, what="probe task started")
    time.sleep(0.5)  # the task is mid-way: well inside its 6 s of work

    assert server.process is not None
    server.process.send_signal(signal.SIGKILL)  # a crash, not a clean shutdown
    server.process.wait(timeout=10)
    time.sleep(1.0)  # the worker notices the broker is gone
    server.start()  # same data directory: the AOF brings back the queue and the unacked message

    wait_until(
        lambda: lines(markers / "done") >= 1 or worker.process.poll() is not None, timeout=120, what="probe task done"
    )
    assert worker.process.poll() is None, worker.log()[-4000:]
    # Nothing left that could run it again: the queue is empty and no message waits unacknowledged.
    broker = broker_client(server)
    try:
        wait_until(
            lambda: broker.llen("default") == 0 and broker.hlen("unacked") == 0,
            timeout=60,
            what="queue drained and every message acknowledged",
        )
    finally:
        broker.close()
    assert (lines(markers / "started"), lines(markers / "done")) == (1, 1), worker.log()[-4000:]
    assert worker.process.poll() is None, worker.log()[-4000:]
    assert "AttributeError" not in worker.log()
