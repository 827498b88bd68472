"""The worker survives its broker (the embedded FalkorDB/Redis) crashing and restarting under a running task."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from celery import Celery

from tests.faults.conftest import broker_client, broker_urls, wait_until

pytestmark = [pytest.mark.faults, pytest.mark.worker]


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


@pytest.mark.parametrize("tcp", [False, True], ids=["unix-socket", "tcp"])
def test_worker_survives_broker_restart_mid_task_and_work_completes_once(tcp, request, short_tmp, start_worker):
    server = request.getfixturevalue("throwaway_tcp_store" if tcp else "throwaway_store")
    redis_url, broker_url = broker_urls(server, tcp=tcp)
    worker = start_worker(redis_url=redis_url, broker_url=broker_url)
    markers = short_tmp / "markers"
    markers.mkdir()
    sender = Celery("fault-sender", broker=broker_url)
    try:
        sender.send_task(
            "tests.faults.probe",
            kwargs={"marker_dir": str(markers), "run_seconds": float(os.environ.get("EXO_PROBE_SECONDS", "4"))},
            queue="default",
        )
    finally:
        sender.close()
    wait_until(lambda: _lines(markers / "started") >= 1, timeout=60, what="probe task started")
    time.sleep(0.5)  # the task is mid-way: well inside its 4 s of work

    assert server.process is not None
    server.process.send_signal(
        getattr(signal, os.environ.get("EXO_KILL_SIGNAL", "SIGKILL"))
    )  # a crash, not a clean shutdown
    server.process.wait(timeout=10)
    time.sleep(float(os.environ.get("EXO_DOWN_SECONDS", "1")))  # the worker notices the broker is gone
    server.start()

    wait_until(lambda: _lines(markers / "done") >= 1 or worker.process.poll() is not None, timeout=120,
               what="probe task done")  # fmt: skip
    assert worker.process.poll() is None, worker.log()[-4000:]
    # Nothing left that could run it again: the queue is empty and no message waits unacknowledged.
    broker = broker_client(server)
    try:
        wait_until(lambda: broker.llen("default") == 0 and broker.hlen("unacked") == 0, timeout=60,
                   what="queue drained and every message acknowledged")  # fmt: skip
    finally:
        broker.close()
    assert _lines(markers / "done") == 1, worker.log()[-4000:]
    assert worker.process.poll() is None, worker.log()[-4000:]
