"""make run (scripts/run.py) stops in order with documents in flight (issue 23 §2): the web first, then beat,
then the worker while the broker still answers (it finishes or requeues its stage), FalkorDB/Redis last; and a
supervisor that is SIGKILLed leaves that same orderly teardown to its watchdog, so the next start (which waits
for it) finishes every document. Before, PR_SET_PDEATHSIG sent SIGTERM to every child at once: redis-server
was gone in ~2 s while the worker still finished stages it could then not ack or hand on.

Real parts: scripts/run.py with its embedded FalkorDB/Redis, SQLite database, celery worker and beat, uvicorn."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx
import psutil
import pytest
from django.conf import settings

from exograph.core.supervisor import (
    REGISTRY,
    ChildRecord,
    StopStep,
    proc_start_ticks,
    registry_write,
    teardown_leftovers,
)
from tests.faults.conftest import wait_until
from tests.faults.test_supervisor import Run, run_env, start_run  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.faults]

DOCUMENTS = 4
# Long enough that stages take a while (the embed stage of a few hundred chunks).
TEXT = (
    "Ada Lovelace wrote the first published program for Charles Babbage's Analytical Engine in 1843. "
    "Babbage designed the engine in London; Luigi Menabrea described it in a paper from Turin. "
) * 220
ORDER = ("web", "celery beat", "celery worker", "FalkorDB/Redis")


def _key(env: dict[str, str]) -> str:
    import json

    return str(json.loads((Path(env["EXOGRAPH_VAR_DIR"]) / "demo.json").read_text())["api_key"])


def _upload(run: Run, key: str) -> list[str]:
    ids = []
    for i in range(DOCUMENTS):
        response = httpx.post(
            f"{run.base}/api/v1/documents/",
            json={"text": f"Document {i}. {TEXT}", "title": f"Engine {i}"},
            headers={"Authorization": f"Bearer {key}"},
            timeout=60,
        )
        assert response.status_code == 201, response.text
        ids.append(response.json()["id"])
    return ids


def _statuses(run: Run, key: str, ids: list[str]) -> list[str]:
    out = []
    for doc_id in ids:
        response = httpx.get(
            f"{run.base}/api/v1/documents/{doc_id}/", headers={"Authorization": f"Bearer {key}"}, timeout=10
        )
        out.append(response.json()["status"] if response.status_code == 200 else f"http {response.status_code}")
    return out


def _in_flight(run: Run, key: str, ids: list[str]) -> bool:
    return "processing" in _statuses(run, key, ids)


def _stop_order(log: str) -> list[str]:
    """The services in the order their 'stopped' lines appear."""
    names = []
    for line in log.splitlines():
        for name in ORDER:
            if f"supervisor: {name} stopped" in line:
                names.append(name)
    return names


def _all_processed(run: Run, key: str, ids: list[str]) -> bool:
    statuses = _statuses(run, key, ids)
    assert "failed" not in statuses, statuses
    return statuses == ["processed"] * len(ids)


def _ledger_whole(env: dict[str, str]) -> None:
    db = sqlite3.connect(Path(env["EXOGRAPH_VAR_DIR"]) / "db.sqlite3")
    try:
        for user_id, balance in db.execute("SELECT user_id, balance FROM billing_creditaccount"):
            (total,) = db.execute(
                "SELECT COALESCE(SUM(e.amount), 0) FROM billing_creditentry e JOIN billing_creditaccount a "
                "ON e.account_id = a.id WHERE a.user_id = ?",
                (user_id,),
            ).fetchone()
            assert balance == total, (user_id, balance, total)
    finally:
        db.close()


def _children(tmp_path: Path, names: list[str]) -> list[subprocess.Popen[bytes]]:
    """Processes that write '<name> stopped' to tmp_path/stops when SIGTERMed (after a moment: a slow stop)."""
    code = (
        "import signal, sys, time\n"
        "def stop(*_):\n"
        "    time.sleep(0.3)\n"
        "    open(sys.argv[2], 'a').write(sys.argv[1] + ' stopped\\n')\n"
        "    raise SystemExit(0)\n"
        "signal.signal(signal.SIGTERM, stop)\n"
        "open(sys.argv[2] + '.' + sys.argv[1], 'w').write('up')\n"
        "while True: time.sleep(1)\n"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code, name, str(tmp_path / "stops")], start_new_session=True)
        for name in names
    ]
    wait_until(lambda: all((tmp_path / f"stops.{n}").exists() for n in names), timeout=30, what="children up")
    return procs


def _record(name: str, proc: subprocess.Popen[bytes]) -> ChildRecord:
    started = proc_start_ticks(proc.pid)
    assert started is not None
    return ChildRecord(name, proc.pid, started, (StopStep(signal.SIGTERM, 20.0),))


def _watchdog(run_dir: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "exograph.core.supervisor", "watch", str(run_dir), "1"],
        cwd=settings.BASE_DIR,
        stdin=subprocess.PIPE,
        start_new_session=True,
    )


def test_the_watchdog_of_a_dead_supervisor_stops_its_children_last_started_first(tmp_path):
    procs = _children(tmp_path, ["store", "worker", "web"])
    try:
        registry_write(tmp_path, [_record(n, p) for n, p in zip(["store", "worker", "web"], procs, strict=True)])
        watchdog = _watchdog(tmp_path)
        assert watchdog.stdin is not None
        watchdog.stdin.close()  # the supervisor's end of the pipe is gone: it died
        assert watchdog.wait(timeout=60) == 0
        for proc in procs:
            proc.wait(timeout=10)  # each exited by its own SIGTERM handler (the watchdog waited for each)
        assert (tmp_path / "stops").read_text().split("\n")[:3] == ["web stopped", "worker stopped", "store stopped"]
        assert not (tmp_path / REGISTRY).exists()
    finally:
        for proc in procs:
            proc.kill()


def test_the_watchdog_of_a_supervisor_that_stopped_in_order_touches_nothing(tmp_path):
    procs = _children(tmp_path, ["a", "b"])
    try:
        registry_write(tmp_path, [_record("a", procs[0])])
        watchdog = _watchdog(tmp_path)
        assert watchdog.stdin is not None
        watchdog.stdin.write(b"done\n")
        watchdog.stdin.close()
        assert watchdog.wait(timeout=60) == 0
        assert all(proc.poll() is None for proc in procs) and not (tmp_path / "stops").exists()
        # A registered pid now naming another process (another start time) is never signalled.
        registry_write(tmp_path, [ChildRecord("b", procs[1].pid, 1, (StopStep(signal.SIGTERM, 5.0),))])
        assert teardown_leftovers(tmp_path, why="test") == 0
        assert procs[1].poll() is None
    finally:
        for proc in procs:
            proc.kill()


def test_sigint_with_documents_in_flight_stops_web_first_and_the_store_last(run_env, start_run):  # noqa: F811
    run = start_run(run_env)
    wait_until(run.answers, timeout=120, what="make run serving")
    key = _key(run_env)
    ids = _upload(run, key)
    wait_until(lambda: _in_flight(run, key, ids), timeout=120, what="a document processing")
    run.stop(signal.SIGINT)  # like Ctrl-C; fails if any child is left behind
    log = run.log()
    assert run.process.returncode == 0, log[-3000:]
    assert _stop_order(log) == list(ORDER), log[-4000:]
    assert "Couldn't ack" not in log and "OperationalError" not in log, log[-4000:]
    print("\n".join(line for line in log.splitlines() if "supervisor:" in line))

    again = start_run(run_env)  # the same start command: what the worker requeued is finished
    wait_until(again.answers, timeout=120, what="make run serving again")
    wait_until(lambda: _all_processed(again, key, ids), timeout=300, what="every document processed", interval=1)
    _ledger_whole(run_env)


def test_supervisor_sigkilled_its_watchdog_stops_children_in_order_and_the_next_start_finishes_all(
    run_env,  # noqa: F811
    start_run,  # noqa: F811
):
    run = start_run(run_env)
    wait_until(run.answers, timeout=120, what="make run serving")
    key = _key(run_env)
    ids = _upload(run, key)
    wait_until(lambda: _in_flight(run, key, ids), timeout=120, what="a document processing")
    children = [p for p in psutil.Process(run.process.pid).children() if "watch" not in p.cmdline()]
    assert len(children) == len(ORDER), [p.cmdline() for p in children]
    run.process.send_signal(signal.SIGKILL)  # the kernel runs none of its handlers
    run.process.wait(timeout=10)

    again = start_run(run_env)  # at once: it must wait for (or do) the orderly teardown before starting
    _, alive = psutil.wait_procs(children, timeout=180)
    assert not alive, [p.pid for p in alive]
    logs = run.log() + "\n" + again.log()
    assert "died: stopping what it left, in order: web" in logs or "earlier run ended" in logs, logs[-4000:]
    assert _stop_order(logs) == list(ORDER), logs[-4000:]
    assert "Couldn't ack" not in logs, logs[-4000:]
    print("\n".join(line for line in logs.splitlines() if "supervisor:" in line))  # the fault table

    wait_until(again.answers, timeout=120, what="the next start serving")
    wait_until(lambda: _all_processed(again, key, ids), timeout=300, what="every document processed", interval=1)
    print(f"processed after the next start: {_statuses(again, key, ids)}")
    _ledger_whole(run_env)
    assert not list((Path(run_env["EXOGRAPH_VAR_DIR"]) / "run").glob("*.tmp"))
