"""`make run` (scripts/run.py) as a child of the tests: the embedded default on a temporary var dir and a free port.

The child sees none of the variables the test session or CI set (DATABASE_URL, REDIS_URL, FALKORDB_URL, eager
Celery, the static-file overrides): it picks SQLite, its own FalkorDB/Redis, a worker, beat and uvicorn exactly
as a newcomer's `make run` does. Its output (every child's log, the console email backend's messages) goes to
a file in the var dir, read while it runs; nothing blocks on a full pipe.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, TypeVar

import httpx
import psutil
from django.conf import settings

from tests.live import free_port

# Set by CI (.ci/run) or by this test session (tests/services_plugin.py); `make run` on a fresh machine has none.
EMBEDDED_ENV_VARS = (
    "DATABASE_URL",
    "REDIS_URL",
    "FALKORDB_URL",
    "DJANGO_SECRET_KEY",
    "CELERY_TASK_ALWAYS_EAGER",
    "DJANGO_SECURE_SSL_REDIRECT",
    "DJANGO_STATIC_MANIFEST",
    "DJANGO_STATIC_ROOT",
    "EXOGRAPH_PUBLIC_URL",
)

T = TypeVar("T")


def embedded_env(var_dir: str | None = None) -> dict[str, str]:
    """This process's environment without the CI/test overrides, on a fresh var dir and a free port."""
    env = {k: v for k, v in os.environ.items() if k not in EMBEDDED_ENV_VARS}
    env.update(
        EXOGRAPH_VAR_DIR=var_dir or tempfile.mkdtemp(prefix="exo-run-", dir="/tmp"),
        EXOGRAPH_PORT=str(free_port()),
    )
    return env


def wait_for(url: str, timeout: float = 90) -> httpx.Response:
    """The first answer of url (any status) within timeout seconds, else a clear failure."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            return httpx.get(url, timeout=2)
        except httpx.TransportError:
            time.sleep(0.5)
    raise AssertionError(f"{url} did not answer within {timeout}s")


def until(check: Callable[[], T | None], *, timeout: float, what: str, every: float = 1.0) -> T:
    """Poll check() until it returns something truthy; fail naming `what` (and the last value) at the deadline."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        last = check()
        if last:
            return last
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not reached within {timeout:.0f}s (last: {last!r})")
        time.sleep(every)


class MakeRun:
    """scripts/run.py started with env; output to <var dir>/supervisor.log (appended across restarts)."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.var_dir = Path(env["EXOGRAPH_VAR_DIR"])
        self.base = f"http://127.0.0.1:{env['EXOGRAPH_PORT']}"
        self.log_path = self.var_dir / "supervisor.log"
        self.proc: subprocess.Popen[str] | None = None
        self._log: IO[str] | None = None

    def start(self) -> MakeRun:
        self.var_dir.mkdir(parents=True, exist_ok=True)
        self._log = self.log_path.open("a")
        self.proc = subprocess.Popen(  # noqa: S603
            [sys.executable, "scripts/run.py"],
            cwd=settings.BASE_DIR,
            env=self.env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            text=True,
        )
        return self

    def wait_ready(self, timeout: float = 120) -> None:
        """The login page answers (migrations, demo account and every child are up)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc is not None and self.proc.poll() is None, f"run.py exited early:\n{self.output()[-3000:]}"
            try:
                if httpx.get(f"{self.base}/login/", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.5)
        raise AssertionError(f"make run did not serve {self.base}/login/ within {timeout}s:\n{self.output()[-3000:]}")

    def output(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def demo(self) -> dict[str, str]:
        return dict(json.loads((self.var_dir / "demo.json").read_text()))

    def manage(self, *args: str, timeout: float = 120) -> str:
        """manage.py in the service's own environment (its SQLite, its FalkorDB/Redis): what an operator runs."""
        done = subprocess.run(  # noqa: S603
            [sys.executable, "manage.py", *args],
            cwd=settings.BASE_DIR,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        assert done.returncode == 0, f"manage.py {args[0]} failed:\n{done.stdout}\n{done.stderr}"
        return done.stdout

    def stop(self) -> str:
        """SIGINT as Ctrl-C does; every child must be gone within the deadlines. Returns the output so far."""
        assert self.proc is not None
        children = psutil.Process(self.proc.pid).children(recursive=True)
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise
        finally:
            _, alive = psutil.wait_procs(children, timeout=10)
            for leftover in alive:
                leftover.kill()
            if self._log is not None:
                self._log.close()
        assert not alive, f"left behind: {[p.pid for p in alive]}"
        return self.output()
