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
import time
from collections.abc import Iterator
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


def _wait_serving(run: Run, what: str) -> None:
    try:
        # /readyz, not a page: on PostgreSQL make run is not the embedded default and has no built static files.
        wait_until(lambda: run.answers("/readyz"), timeout=180, what=what)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; its log:\n{run.log()[-3000:]}") from None


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


def _named_children(supervisor: psutil.Process) -> dict[str, psutil.Process]:
    """make run's four children by service name (not its watchdog)."""
    marks = {"uvicorn": "web", "beat": "celery beat", "worker": "celery worker", "redis-server": "FalkorDB/Redis"}
    named = {}
    for proc in supervisor.children():
        line = " ".join(proc.cmdline())
        for mark, name in marks.items():
            if mark in line and "supervisor watch" not in line:
                named[name] = proc
    assert sorted(named) == sorted(ORDER), named
    return named


def _exit_order(named: dict[str, psutil.Process], *, timeout: float) -> list[str]:
    """Watch the processes until all are gone; their names in the order they went (a zombie counts as gone)."""
    gone: dict[str, float] = {}

    def dead(proc: psutil.Process) -> bool:
        try:
            return proc.status() == psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return True

    def all_gone() -> bool:
        for name, proc in named.items():
            if name not in gone and dead(proc):
                gone[name] = time.monotonic()
        return len(gone) == len(named)

    wait_until(all_gone, timeout=timeout, what="every child of the killed supervisor gone", interval=0.02)
    return sorted(gone, key=gone.__getitem__)


def _all_processed(run: Run, key: str, ids: list[str]) -> bool:
    statuses = _statuses(run, key, ids)
    assert "failed" not in statuses, statuses
    return statuses == ["processed"] * len(ids)


_LEDGER = (
    "SELECT a.user_id, a.balance, (SELECT COALESCE(SUM(e.amount), 0) FROM billing_creditentry e "
    "WHERE e.account_id = a.id) FROM billing_creditaccount a"
)


def _ledger_whole(env: dict[str, str]) -> None:
    """Every account's balance equals the sum of its ledger, in make run's own database."""
    if "DATABASE_URL" in env:
        import psycopg

        with psycopg.connect(env["DATABASE_URL"]) as pg:
            rows = pg.execute(_LEDGER).fetchall()
    else:
        db = sqlite3.connect(Path(env["EXOGRAPH_VAR_DIR"]) / "db.sqlite3")
        try:
            rows = db.execute(_LEDGER).fetchall()
        finally:
            db.close()
    assert rows and all(balance == total for _, balance, total in rows), rows


@pytest.fixture
def make_run_env(run_env: dict[str, str]) -> Iterator[dict[str, str]]:  # noqa: F811
    """make run's environment: its embedded SQLite, or, when the tests run on PostgreSQL, a fresh database of its
    own beside the test database (<test db>_makerun)."""
    db = settings.DATABASES["default"]
    if db["ENGINE"] != "django.db.backends.postgresql":
        yield run_env
        return
    import psycopg

    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    server = f"postgres://{auth}@{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}"
    name = f"{db['NAME']}_makerun"
    with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    # Not the embedded default any more: the settings then want a secret key and HTTPS (plain HTTP on loopback here).
    yield {
        **run_env,
        "DATABASE_URL": f"{server}/{name}",
        "DJANGO_SECRET_KEY": "make-run-test-" + "k" * 40,
        "DJANGO_SECURE_SSL_REDIRECT": "false",
    }
    with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


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


def test_sigint_with_documents_in_flight_stops_web_first_and_the_store_last(make_run_env, start_run):  # noqa: F811
    env = make_run_env
    run = start_run(env)
    _wait_serving(run, "make run serving")
    key = _key(env)
    ids = _upload(run, key)
    wait_until(lambda: _in_flight(run, key, ids), timeout=120, what="a document processing")
    run.stop(signal.SIGINT)  # like Ctrl-C; fails if any child is left behind
    log = run.log()
    assert run.process.returncode == 0, log[-3000:]
    assert _stop_order(log) == list(ORDER), log[-4000:]
    assert "Couldn't ack" not in log and "OperationalError" not in log, log[-4000:]
    print("\n".join(line for line in log.splitlines() if "supervisor:" in line))

    again = start_run(env)  # the same start command: what the worker requeued is finished
    _wait_serving(again, "make run serving again")
    wait_until(lambda: _all_processed(again, key, ids), timeout=300, what="every document processed", interval=3)
    _ledger_whole(env)


def test_supervisor_sigkilled_its_watchdog_stops_children_in_order_and_the_next_start_finishes_all(
    make_run_env,
    start_run,  # noqa: F811
):
    env = make_run_env
    run = start_run(env)
    _wait_serving(run, "make run serving")
    key = _key(env)
    ids = _upload(run, key)
    wait_until(lambda: _in_flight(run, key, ids), timeout=120, what="a document processing")
    named = _named_children(psutil.Process(run.process.pid))
    run.process.send_signal(signal.SIGKILL)  # the kernel runs none of its handlers
    run.process.wait(timeout=10)

    again = start_run(env)  # at once: it must wait for (or do) the orderly teardown before starting
    # Web first, the worker while the store still answers, the store last (before: all TERMed at once by
    # PR_SET_PDEATHSIG, the store gone in ~2 s while the worker still finished its stages).
    assert _exit_order(named, timeout=180) == list(ORDER)

    def teardown_done() -> bool:
        return "supervisor: FalkorDB/Redis stopped" in run.log() + again.log()

    wait_until(teardown_done, timeout=30, what="the teardown's last line")
    logs = run.log() + "\n" + again.log()
    assert "died: stopping what it left, in order: web" in logs or "earlier run ended" in logs, logs[-4000:]
    assert _stop_order(logs) == list(ORDER), logs[-4000:]
    assert "Couldn't ack" not in logs, logs[-4000:]
    print("\n".join(line for line in logs.splitlines() if "supervisor:" in line))  # the fault table

    _wait_serving(again, "the next start serving")
    wait_until(lambda: _all_processed(again, key, ids), timeout=300, what="every document processed", interval=3)
    print(f"{len(ids)} documents processed after the next start")
    _ledger_whole(env)
    assert not list((Path(env["EXOGRAPH_VAR_DIR"]) / "run").glob("*.tmp"))
