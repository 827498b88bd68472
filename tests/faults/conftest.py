"""Fault tests: a throwaway FalkorDB/Redis server per test and real Celery worker processes against it.

Every wait is bounded, every process a test starts is stopped by its fixture, and everything is loopback.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import redis
from celery import Celery
from django.conf import settings
from kombu import Connection

from exograph.core.embedded import EmbeddedFalkorDB
from exograph.core.env import redis_db_url
from tests.fakes.llm_chat import StuckChatServer
from tests.graphs.conftest import (  # noqa: F401 (fixtures: graph writing, throwaway store servers)
    store_servers,
    write_doc,
)
from tests.workers import (  # noqa: F401 (re-exported for the fault tests; the fixtures come from tests/conftest.py)
    SESSION_ENV_VARS,
    WorkerProcess,
    database_url,
    session_stores,
    tasks_via_broker,
    wait_until,
    wait_while_alive,
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def throwaway_store(short_tmp: Path) -> Iterator[EmbeddedFalkorDB]:
    """A persistent (AOF) FalkorDB/Redis server of this test alone on a unix socket, stopped afterwards."""
    server = EmbeddedFalkorDB(
        socket_path=short_tmp / "falkordb.sock",
        data_dir=short_tmp / "data",
        persist=True,
        log_file=short_tmp / "falkordb.log",
    )
    server.start()
    yield server
    server.stop()


@pytest.fixture
def throwaway_tcp_store(short_tmp: Path) -> Iterator[EmbeddedFalkorDB]:
    """The same, listening on a loopback TCP port as well."""
    server = EmbeddedFalkorDB(
        socket_path=short_tmp / "falkordb.sock",
        data_dir=short_tmp / "data",
        persist=True,
        log_file=short_tmp / "falkordb.log",
        port=free_port(),
    )
    server.start()
    yield server
    server.stop()


@pytest.fixture
def stuck_provider() -> Iterator[StuckChatServer]:
    """An OpenAI chat fake that holds every request until released (released after the test)."""
    with StuckChatServer() as server:
        yield server
        server.release.set()


def chat_fault_env(provider: StuckChatServer) -> tuple[dict[str, str], dict[str, str]]:
    """A chat kill test's environments: the worker's and beat's (the session's stores, short leases) and the web
    process's (the same with CHAT_PROVIDER=openai at provider: snap model, 100 s timeout, no SDK retries)."""
    services = short_lease_env(
        REDIS_URL=settings.REDIS_URL, FALKORDB_URL=settings.FALKORDB_URL, CELERY_BROKER_URL=settings.CELERY_BROKER_URL
    )
    web = {
        **services,
        "CHAT_PROVIDER": "openai",
        "LLM_BASE_URL": provider.base_url,
        "LLM_API_KEY": provider.api_key,
        "CHAT_SNAP_MODEL": "fast-model",
        "LLM_TIMEOUT_SECONDS": "100",
        "LLM_MAX_RETRIES": "0",
    }
    return services, web


@pytest.fixture
def silent_broker() -> Iterator[str]:
    """A broker URL whose server accepts connections (the kernel's backlog) and never answers a command: a process
    sending to it hangs in the send (the enqueue-lost tests SIGKILL it there)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    yield f"redis://127.0.0.1:{listener.getsockname()[1]}/1"
    listener.close()


def send_probe(broker_url: str, *, marker_dir: Path, run_seconds: float) -> None:
    """Queue one probe task (tests/faults/tasks.py) on the default queue of broker_url."""
    # Not the current app: shared tasks (billing's earnings task) would follow it to this broker, not eagerly, and
    # fail later tests whose on-commit sends then reached a store long gone.
    sender = Celery("fault-sender", broker=broker_url, set_as_current=False)
    try:
        sender.send_task(
            "tests.faults.probe", kwargs={"marker_dir": str(marker_dir), "run_seconds": run_seconds}, queue="default"
        )
    finally:
        sender.close()


def lines(path: Path) -> int:
    """How many lines the probe wrote to path (0 when it does not exist yet)."""
    return len(path.read_text().splitlines()) if path.exists() else 0


def broker_urls(server: EmbeddedFalkorDB, *, tcp: bool) -> tuple[str, str]:
    """(REDIS_URL, CELERY_BROKER_URL) of server, over its unix socket or its TCP port."""
    base = f"redis://127.0.0.1:{server.port}" if tcp else server.url
    return base, redis_db_url(base, 1, for_kombu=True)


def broker_client(server: EmbeddedFalkorDB) -> redis.Redis:
    """A plain client of the broker's database (1) on server, to inspect queues and unacked messages."""
    return redis.Redis(unix_socket_path=str(server.socket_path), db=1, socket_timeout=5)


def short_lease_env(**extra: str) -> dict[str, str]:
    """A kill-and-resume test's worker environment: this test's database, leases of 4 s swept every 2 s (the
    defaults, 30 s / 15 s, resume within 45 s)."""
    return {
        "DATABASE_URL": database_url(),
        "EXOGRAPH_LEASE_TTL": "4",
        "EXOGRAPH_LEASE_SWEEP": "2",
        "DJANGO_SECURE_SSL_REDIRECT": "0",
        **extra,
    }


# --- RabbitMQ (amqp://): a virtual host of this test alone on the machine's server (CI runs one too) ---------------

RABBITMQ_URL = os.environ.get("EXO_TEST_RABBITMQ_URL", "amqp://guest:guest@127.0.0.1:5672")


def rabbitmqctl(*args: str) -> str:
    """Run rabbitmqctl (the server's own CLI: vhosts are not made over AMQP) and return its output."""
    done = subprocess.run(["rabbitmqctl", "-q", *args], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, f"rabbitmqctl {' '.join(args)}: {done.stdout}{done.stderr}"
    return done.stdout


@pytest.fixture
def rabbitmq_broker() -> Iterator[str]:
    """The amqp:// URL of a fresh RabbitMQ virtual host (its queues, exchanges and delayed-delivery chain are this
    test's alone: nothing collides with CI or another test), deleted afterwards with everything in it."""
    vhost = f"exo-test-{uuid.uuid4().hex[:12]}"
    user = RABBITMQ_URL.split("://", 1)[1].split(":", 1)[0]
    rabbitmqctl("add_vhost", vhost)
    try:
        rabbitmqctl("set_permissions", "-p", vhost, user, ".*", ".*", ".*")
        yield f"{RABBITMQ_URL}/{vhost}"
    finally:
        rabbitmqctl("delete_vhost", vhost)


def rabbitmq_queue_types(broker_url: str) -> dict[str, str]:
    """{queue name: type (classic, quorum)} of the broker_url's virtual host. (Its message counts are statistics,
    updated every few seconds: rabbitmq_ready tells the live ones.)"""
    vhost = broker_url.rsplit("/", 1)[1]
    rows = rabbitmqctl("list_queues", "-p", vhost, "--no-table-headers", "name", "type")
    return dict(row.split("\t") for row in rows.splitlines())


def rabbitmq_ready(broker_url: str, names: Iterable[str]) -> dict[str, tuple[int, int]]:
    """{queue name: (messages ready, consumers)} now, asked of RabbitMQ over AMQP (a passive declare)."""
    counts = {}
    with Connection(broker_url, connect_timeout=10) as connection:
        for name in names:
            channel = connection.channel()
            try:
                ok = channel.queue_declare(queue=name, passive=True)
                counts[name] = (int(ok.message_count), int(ok.consumer_count))
            finally:
                channel.close()
    return counts


@contextmanager
def tasks_via_rabbitmq(broker_url: str) -> Iterator[None]:
    """Inside the block this process sends Celery tasks to RabbitMQ at broker_url (quorum queues, confirmed
    publishes), like a production web process with CELERY_BROKER_URL=amqp://...; the session's broker after."""
    from kombu import pools as kombu_pools

    from exograph.celery import app as celery_app
    from exograph.core.broker import celery_queues, celery_transport_options

    keys = ("broker_url", "broker_transport_options", "task_queues", "task_always_eager")
    previous = {key: celery_app.conf[key] for key in keys}
    environ = os.environ.pop("CELERY_BROKER_URL", None)  # Celery reads it before its own setting

    def connections_drop() -> None:  # the producer pool and the queue map were built for the previous broker
        # kombu keeps its connection and producer pools in process-wide registries keyed by broker URL: closing
        # only the app's pool left a closed pool registered for the session's broker, and every later send
        # (eager ones too: Celery acquires a producer first) raised "Acquire on closed pool". Reset the registries.
        kombu_pools.reset()
        celery_app._pool = None
        celery_app.__dict__.pop("amqp", None)

    connections_drop()
    celery_app.conf.update(
        broker_url=broker_url,
        broker_transport_options=celery_transport_options(broker_url, visibility_timeout=0),
        task_queues=celery_queues(broker_url),
        task_always_eager=False,
    )
    try:
        yield
    finally:
        connections_drop()
        celery_app.conf.update(previous)
        if environ is not None:
            os.environ["CELERY_BROKER_URL"] = environ


# --- a private PostgreSQL server (never the machine's shared one) ---------------------------------


def _pg_bin(name: str) -> str:
    found = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"))
    if not found:
        raise RuntimeError(
            f"PostgreSQL's {name} is missing: install postgresql (its server binaries) for the fault tests"
        )
    return str(found[-1])


@dataclass
class PrivatePostgres:
    """A PostgreSQL cluster of this test alone (initdb in a temp dir, its own port), started and stopped at will."""

    data_dir: Path
    port: int
    log_path: Path

    def _run(self, *args: str, timeout: float = 120) -> None:
        as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        subprocess.run([*as_postgres, *args], check=True, capture_output=True, timeout=timeout)  # noqa: S603

    def start(self) -> None:
        options = f"-p {self.port} -k {self.data_dir} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run(_pg_bin("pg_ctl"), "-D", str(self.data_dir), "-l", str(self.log_path), "-o", options, "-w", "start")

    def stop(self, mode: str = "fast") -> None:
        self._run(_pg_bin("pg_ctl"), "-D", str(self.data_dir), "-m", mode, "-w", "stop")

    def running(self) -> bool:
        return (self.data_dir / "postmaster.pid").exists()

    def url(self, name: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{name}"


@pytest.fixture
def private_postgres() -> Iterator[PrivatePostgres]:
    base = Path(tempfile.mkdtemp(prefix="exo-pg-", dir="/tmp"))
    if os.geteuid() == 0:  # initdb refuses root: the cluster belongs to the postgres user
        shutil.chown(base, user="postgres")
    server = PrivatePostgres(data_dir=base / "data", port=free_port(), log_path=base / "postgres.log")
    server._run(_pg_bin("initdb"), "-D", str(server.data_dir), "-A", "trust", "-U", "postgres", "--no-sync")
    server.start()
    try:
        yield server
    finally:
        if server.running():
            server.stop("immediate")
        shutil.rmtree(base, ignore_errors=True)


# --- the web process (uvicorn), like make run's ------------------------------------------------------


@dataclass
class WebProcess:
    process: subprocess.Popen[bytes]
    base: str
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


@pytest.fixture
def start_web(short_tmp: Path) -> Iterator[Callable[..., WebProcess]]:
    """Start uvicorn on exograph.asgi (as make run does) with env on a free port; stopped afterwards."""
    webs: list[WebProcess] = []

    def start(env: dict[str, str]) -> WebProcess:
        port = free_port()
        full = {k: v for k, v in os.environ.items() if k not in SESSION_ENV_VARS}
        full.update(
            DJANGO_SECRET_KEY=settings.SECRET_KEY,
            CELERY_TASK_ALWAYS_EAGER="0",
            DJANGO_SECURE_SSL_REDIRECT="0",
            EXOGRAPH_VAR_DIR=str(short_tmp / f"web-var-{len(webs)}"),
        )
        full.update(env)
        log_path = short_tmp / f"web-{len(webs)}.log"
        args = [
            sys.executable, "-m", "uvicorn", "exograph.asgi:application", "--host", "127.0.0.1", "--port", str(port),
            "--lifespan", "on", "--no-server-header", "--no-access-log",
        ]  # fmt: skip
        with log_path.open("wb") as log:
            process = subprocess.Popen(  # noqa: S603
                args, cwd=settings.BASE_DIR, env=full, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        web = WebProcess(process=process, base=f"http://127.0.0.1:{port}", log_path=log_path)
        webs.append(web)

        def answers() -> bool:
            assert process.poll() is None, web.log()[-3000:]
            try:
                return httpx.get(f"{web.base}/healthz", timeout=3).status_code == 200
            except httpx.TransportError:
                return False

        wait_until(answers, timeout=90, what="web serving")
        return web

    yield start
    for web in webs:
        if web.process.poll() is None:
            web.process.send_signal(signal.SIGTERM)
            try:
                web.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(web.process.pid, signal.SIGKILL)
                web.process.wait(timeout=10)


def manage(env: dict[str, str], *args: str, timeout: float = 300) -> str:
    """Run manage.py with env (the session's own service variables removed); its stdout."""
    full = {k: v for k, v in os.environ.items() if k not in SESSION_ENV_VARS}
    full.update(DJANGO_SECRET_KEY=settings.SECRET_KEY, **env)
    done = subprocess.run(  # noqa: S603
        [sys.executable, "manage.py", *args], cwd=settings.BASE_DIR, env=full, capture_output=True, text=True,
        timeout=timeout,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout
