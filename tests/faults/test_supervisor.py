"""`make run`'s supervisor: what dies is restarted with backoff, a crash loop is reported, stale servers are taken over."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import psutil
import pytest
from django.conf import settings

from exograph.core.embedded import EmbeddedFalkorDB
from exograph.core.supervisor import ProcessService, RestartPolicy, StoreService, Supervisor
from tests.e2e.embedded import EMBEDDED_ENV_VARS
from tests.faults.conftest import free_port, wait_until

pytestmark = [pytest.mark.faults]


def _supervise_until(supervisor: Supervisor, condition, *, timeout: float, what: str) -> None:  # type: ignore[no-untyped-def]
    def check() -> bool:
        supervisor.check_once()
        return bool(condition())

    wait_until(check, timeout=timeout, what=what, interval=0.02)


def test_supervisor_restarts_a_dying_child_with_growing_backoff_and_reports_a_crash_loop(tmp_path, capfd):
    runs = tmp_path / "runs"
    flaky = ProcessService(
        "flaky",
        [sys.executable, "-c", f"open({str(runs)!r}, 'a').write('run\\n'); raise SystemExit(3)"],
        cwd=tmp_path,
    )
    policy = RestartPolicy(initial_delay=0.1, max_delay=0.4, crash_loop_restarts=4, crash_loop_window=60)
    supervisor = Supervisor([flaky], policy=policy)
    supervisor.start_all()
    try:
        _supervise_until(
            supervisor,
            lambda: runs.exists() and len(runs.read_text().splitlines()) >= 6,
            timeout=30,
            what="six runs of the flaky child",
        )
    finally:
        supervisor.stop_all()
    err = capfd.readouterr().err
    assert "flaky exited with code 3" in err
    delays = [line.split("restarting in ")[1].split(" s")[0] for line in err.splitlines() if "restarting in" in line]
    assert delays[:4] == ["0.1", "0.2", "0.4", "0.4"], err
    assert "ERROR: flaky keeps dying (4 times in 60 s); still retrying every 0.4 s" in err
    assert err.count("keeps dying") == 1, err  # reported once per crash loop, not on every restart


def test_supervisor_restarts_a_killed_store_and_it_answers_again(short_tmp, capfd):
    service = StoreService(EmbeddedFalkorDB.in_directory(short_tmp))
    supervisor = Supervisor([service], policy=RestartPolicy(initial_delay=0.1))
    supervisor.start_all()
    try:
        first = service.store.process
        assert first is not None
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
        _supervise_until(
            supervisor,
            lambda: service.store.process is not first and service.store.is_running(),
            timeout=30,
            what="store restarted",
        )
    finally:
        supervisor.stop_all()
    err = capfd.readouterr().err
    assert "FalkorDB/Redis was killed by SIGKILL" in err and "FalkorDB/Redis restarted" in err
    assert not service.store.is_running()


# --- the real `make run` (scripts/run.py) --------------------------------------------------------------


@pytest.fixture
def run_env(short_tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in EMBEDDED_ENV_VARS}
    env.update(EXOGRAPH_VAR_DIR=str(short_tmp / "var"), EXOGRAPH_PORT=str(free_port()), EXOGRAPH_WORKER_STOP_GRACE="5")
    return env


class Run:
    """scripts/run.py as a subprocess, its output in a file."""

    def __init__(self, env: dict[str, str], log_path: Path) -> None:
        self.env, self.log_path = env, log_path
        self.base = f"http://127.0.0.1:{env['EXOGRAPH_PORT']}"
        with log_path.open("wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "scripts/run.py"],
                cwd=settings.BASE_DIR,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def child(self, marker: str) -> psutil.Process:
        """The supervisor's direct child whose command line contains marker."""
        for proc in psutil.Process(self.process.pid).children():
            if any(marker in arg for arg in proc.cmdline()):
                return proc
        raise AssertionError(f"no child with {marker!r}; log:\n{self.log()[-3000:]}")

    def answers(self, path: str = "/login/") -> bool:
        try:
            return httpx.get(f"{self.base}{path}", timeout=3).status_code == 200
        except httpx.TransportError:
            return False

    def stop(self, signum: signal.Signals = signal.SIGINT) -> None:
        """Stop like Ctrl-C (or signum); fail if any child process is left behind."""
        if self.process.poll() is not None:
            return
        children = psutil.Process(self.process.pid).children(recursive=True)
        self.process.send_signal(signum)
        try:
            self.process.wait(timeout=90)
        except subprocess.TimeoutExpired:
            for proc in children:
                proc.kill()
            self.process.kill()
            self.process.wait(timeout=10)
        _, alive = psutil.wait_procs(children, timeout=10)
        assert not alive, f"left behind: {[p.pid for p in alive]}"


@pytest.fixture
def start_run(short_tmp: Path):  # type: ignore[no-untyped-def]
    runs: list[Run] = []

    def start(env: dict[str, str]) -> Run:
        run = Run(env, short_tmp / f"run-{len(runs)}.log")
        runs.append(run)
        return run

    yield start
    for run in runs:
        run.stop()


def _kill_and_wait_for_new(run: Run, marker: str, what: str) -> psutil.Process:
    old = run.child(marker)
    old.kill()
    old.wait(timeout=10)

    def replaced() -> bool:
        try:
            return run.child(marker).pid != old.pid
        except AssertionError:
            return False

    wait_until(replaced, timeout=60, what=f"{what} restarted")
    return run.child(marker)


def test_run_restarts_worker_web_and_store_that_are_killed(run_env, start_run):
    run = start_run(run_env)
    wait_until(run.answers, timeout=120, what="make run serving")
    key = json.loads((Path(run_env["EXOGRAPH_VAR_DIR"]) / "demo.json").read_text())["api_key"]

    _kill_and_wait_for_new(run, "worker", "celery worker")
    _kill_and_wait_for_new(run, "beat", "celery beat")
    _kill_and_wait_for_new(run, "uvicorn", "web")
    wait_until(run.answers, timeout=90, what="web answering again")
    _kill_and_wait_for_new(run, "redis-server", "FalkorDB/Redis")
    wait_until(lambda: run.answers("/readyz"), timeout=90, what="ready again after the store restart")

    me = httpx.get(f"{run.base}/api/v1/me/", headers={"Authorization": f"Bearer {key}"}, timeout=10)
    assert me.status_code == 200  # same data after the store restart (the API key lives in the database)
    assert run.process.poll() is None, run.log()[-3000:]
    log = run.log()
    for name in ("celery worker", "celery beat", "web", "FalkorDB/Redis"):
        assert f"{name} was killed by SIGKILL" in log and f"{name} restarted" in log, log[-3000:]
    run.stop(signal.SIGTERM)  # how a service manager stops it
    assert run.process.returncode == 0 and "stopped." in run.log()


def test_run_takes_over_a_server_left_on_its_socket_and_refuses_while_it_runs(run_env, start_run, short_tmp):
    var = Path(run_env["EXOGRAPH_VAR_DIR"])
    # A server started by hand (or left by a crash) on make run's socket and data directory.
    leftover = EmbeddedFalkorDB(
        socket_path=var / "run" / "falkordb.sock", data_dir=var / "falkordb", log_file=short_tmp / "by-hand.log"
    )
    leftover.start()
    try:
        run = start_run(run_env)
        wait_until(run.answers, timeout=120, what="make run serving")
        assert leftover.process is not None and leftover.process.poll() is not None  # shut down, cleanly
        assert leftover.process.returncode == 0
        assert "left from an earlier run" in run.log()

        second = subprocess.run(
            [sys.executable, "scripts/run.py"], cwd=settings.BASE_DIR, env=run_env, capture_output=True, text=True,
            timeout=60,
        )  # fmt: skip
        assert second.returncode == 1 and "already runs here" in second.stderr
        assert run.answers() and run.process.poll() is None
    finally:
        leftover.stop()
