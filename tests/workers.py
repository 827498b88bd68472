"""Real Celery workers for tests (one way to start them, for tests/faults, tests/research and tests/documents):
`start_worker` (a fixture of every test, from tests/conftest.py) runs `celery worker` or `celery beat` on the
stores it is given, `session_stores()` names the session's own, `database_url()` the test's database;
`tasks_via_broker()` makes this process send its tasks through the broker, `wait_until` and `wait_while_alive`
wait bounded. Every process a test starts is stopped by the fixture."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.conf import settings

from exograph.core.supervisor import ProcessService, StopStep

# Variables of the session's own services; a fault test's processes get the throwaway server's instead.
SESSION_ENV_VARS = ("DATABASE_URL", "REDIS_URL", "FALKORDB_URL", "CELERY_BROKER_URL", "RATELIMIT_REDIS_URL")


def wait_until(condition: Callable[[], bool], *, timeout: float, what: str, interval: float = 0.1) -> None:
    """Poll condition until it holds; fail naming what did not happen within timeout seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(interval)
    raise AssertionError(f"{what} did not happen within {timeout}s")


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A directory under /tmp (unix socket paths must stay short), removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix="exo-fault-", dir="/tmp"))
    yield path
    if not os.environ.get("EXO_KEEP_FAULT_TMP"):  # set it to keep the logs of a failing fault test
        shutil.rmtree(path, ignore_errors=True)


@dataclass
class WorkerProcess:
    """A real `celery worker` subprocess, its log file, and the supervisor's handle to stop it."""

    service: ProcessService
    log_path: Path

    @property
    def process(self) -> subprocess.Popen[bytes]:
        assert self.service.process is not None
        return self.service.process

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        """Stop by the service's stop steps (the fixture's default: cold shutdown, then SIGKILL)."""
        self.service.stop(hurry=lambda: False)


@pytest.fixture
def start_worker(short_tmp: Path) -> Iterator[Callable[..., WorkerProcess]]:
    """Start `celery worker` (prefork, 2 processes: like `make run`) on a broker URL; every worker is stopped afterwards."""
    workers: list[WorkerProcess] = []

    def start(
        *,
        redis_url: str,
        broker_url: str,
        falkordb_url: str | None = None,  # default: the same server as redis_url (an embedded FalkorDB/Redis)
        queues: str = "default",
        stop_steps: tuple[StopStep, ...] = (StopStep(signal.SIGQUIT, 30.0),),
        extra_env: dict[str, str] | None = None,
        command: str = "worker",
        concurrency: int = 2,
    ) -> WorkerProcess:
        index = len(workers)
        env = {k: v for k, v in os.environ.items() if k not in SESSION_ENV_VARS}
        env.update(
            REDIS_URL=redis_url,
            FALKORDB_URL=falkordb_url or redis_url,
            CELERY_BROKER_URL=broker_url,
            CELERY_TASK_ALWAYS_EAGER="0",
            DJANGO_SECRET_KEY=settings.SECRET_KEY,
            EXOGRAPH_VAR_DIR=str(short_tmp / f"worker-var-{index}"),
        )
        env.update(extra_env or {})
        if command == "beat":  # celery beat: the periodic jobs (the lease sweep), like make run's child
            args = [
                sys.executable, "-m", "celery", "-A", "exograph", "beat", "-l", "info",
                "--schedule", str(short_tmp / f"beat-schedule-{index}"), "--pidfile=",
            ]  # fmt: skip
            ready = "beat: Starting"
        else:
            args = [
                sys.executable, "-m", "celery", "-A", "exograph", "worker",
                "--include", "tests.faults.tasks", "-Q", queues,
                "--pool", "prefork", "--concurrency", str(concurrency), "--without-gossip", "--without-mingle",
                "-l", "info", "-n", f"fault-{os.getpid()}-{index}@%h",
            ]  # fmt: skip
            ready = " ready."
        service = ProcessService(f"worker {index}", args, cwd=Path(settings.BASE_DIR), stop_steps=stop_steps, env=env)
        log_path = short_tmp / f"worker-{index}.log"
        with log_path.open("wb") as log:
            service.process = subprocess.Popen(
                args, cwd=service.cwd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        worker = WorkerProcess(service=service, log_path=log_path)
        workers.append(worker)
        wait_until(
            lambda: ready in worker.log() or worker.process.poll() is not None, timeout=90, what=f"{command} ready"
        )
        assert worker.process.poll() is None, worker.log()[-3000:]
        return worker

    yield start
    for worker in workers:
        worker.service.stop_steps = (StopStep(signal.SIGQUIT, 30.0),)
        worker.stop()


def wait_while_alive(
    worker: WorkerProcess, condition: Callable[[], bool], *, timeout: float, what: str, interval: float = 0.3
) -> None:
    """wait_until that fails at once if the worker died; either failure ends with the worker's log."""

    def alive_and_done() -> bool:
        assert worker.process.poll() is None, "the worker died"
        return condition()

    try:
        wait_until(alive_and_done, timeout=timeout, what=what, interval=interval)
    except AssertionError as failed:
        raise AssertionError(f"{failed}\n{worker.log()[-4000:]}") from None


def session_stores() -> dict[str, str]:
    """start_worker's store URLs for the session's own stores, whatever they are (CI: Redis on TCP for the cache
    and the broker, the embedded FalkorDB for graphs)."""
    return {
        "redis_url": settings.REDIS_URL,
        "broker_url": settings.CELERY_BROKER_URL,
        "falkordb_url": settings.FALKORDB_URL,
    }


@contextmanager
def tasks_via_broker() -> Iterator[None]:
    """Inside the block this process sends Celery tasks to the broker, like production (not eagerly)."""
    from exograph.celery import app as celery_app

    previous = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = False
    try:
        yield
    finally:
        celery_app.conf.task_always_eager = previous


def database_url() -> str:
    """The URL of this test's own database (the one pytest-django created), for subprocesses."""
    from django.db import connection

    db = connection.settings_dict
    if connection.vendor == "sqlite":  # make test without DATABASE_URL
        name = str(db["NAME"])
        assert not name.startswith(("file:memorydb", ":memory:")), "the SQLite test database must be a file"
        return f"sqlite:///{name}"
    assert connection.vendor == "postgresql"
    auth = db["USER"] or ""
    if db.get("PASSWORD"):
        auth += f":{db['PASSWORD']}"
    return f"postgres://{auth}@{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{db['NAME']}"
