"""The FalkorDB connections: a client (and connection pool) per process and server, replicas for reads, Sentinel.

The topology comes from settings (docs/scaling.md); the embedded default is one server and none of this applies:

- ``FALKORDB_URL``: the primary named ``default`` (redis://, rediss://, unix://, or sentinel://, below).
- ``FALKORDB_SENTINEL_URL``: ``sentinel://host:port[,host:port...]/service``: the ``default`` primary is whichever
  server Sentinel names for that service, followed through failovers (falkordb-py's Sentinel connection).
- ``FALKORDB_PRIMARIES``: more primaries for graph placement, ``name=url`` entries (a url may be sentinel:// too).
- ``FALKORDB_REPLICA_URLS``: read replicas, ``url`` (of ``default``) or ``name=url`` entries. A Sentinel-managed
  primary with none listed reads from the replicas Sentinel knows.
- ``FALKORDB_WORLD_PRIMARY``: the primary that holds the World Graph.

Entries are separated by spaces, ``;`` or ``,`` (a sentinel:// entry keeps its commas: they separate sentinels).

Reads (GRAPH.RO_QUERY) go to a replica whose link to its primary is up and whose replication offset is within
``FALKORDB_REPLICA_MAX_LAG_BYTES`` of the primary's (checked at most every ``FALKORDB_REPLICA_CHECK_SECONDS`` per
process); otherwise, or when the replica fails mid-read, the primary serves (store/core.py).
"""

from __future__ import annotations

import itertools
import logging
import re
import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import redis
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from falkordb import FalkorDB
from redis.backoff import NoBackoff
from redis.retry import Retry
from redis.sentinel import Sentinel

from exograph.core.errors import ServiceUnavailable

logger = logging.getLogger(__name__)

DEFAULT = "default"
SENTINEL_SCHEMES = ("sentinel", "redis+sentinel")

_lock = threading.Lock()
_clients: dict[str, FalkorDB] = {}
_sentinels: dict[str, tuple[Sentinel, str]] = {}


class StoreKey(str):
    """A graph's FalkorDB key that knows the primary it is placed on (the Graph row's ``store_server``)."""

    server: str

    def __new__(cls, key: str, server: str = "") -> StoreKey:
        obj = super().__new__(cls, key)
        obj.server = server or DEFAULT
        return obj


def server_of_key(store_name: str) -> str:
    """The primary a store key lives on: its placement, or ``default`` for a plain string."""
    return getattr(store_name, "server", DEFAULT) or DEFAULT


# --- topology -----------------------------------------------------------------------------------


def _entries(raw: str | list[str]) -> list[str]:
    text = " ".join(raw) if isinstance(raw, list) else raw
    out: list[str] = []
    for piece in re.split(r"[;\s]+", text.strip()):
        if not piece:
            continue
        if "sentinel://" in piece:
            out.append(piece)
        else:
            out.extend(p for p in piece.split(",") if p)
    return out


def _named(entry: str, setting: str) -> tuple[str, str]:
    name, sep, url = entry.partition("=")
    if not sep or "://" in name:
        return DEFAULT, entry
    if not re.fullmatch(r"[a-z0-9][a-z0-9_-]{0,31}", name):
        raise ImproperlyConfigured(f"{setting}: server name {name!r} must be 1-32 of a-z 0-9 _ -.")
    return name, url


def falkordb_primaries() -> dict[str, str]:
    """Every primary's name and URL; ``default`` first."""
    default_url = settings.FALKORDB_SENTINEL_URL or settings.FALKORDB_URL
    primaries = {DEFAULT: default_url}
    for entry in _entries(settings.FALKORDB_PRIMARIES):
        name, url = _named(entry, "FALKORDB_PRIMARIES")
        if name == DEFAULT:
            raise ImproperlyConfigured("FALKORDB_PRIMARIES: name each entry (name=url); FALKORDB_URL is 'default'.")
        primaries[name] = url
    return primaries


def falkordb_replica_urls(server: str) -> list[str]:
    """The configured replica URLs of one primary (Sentinel-discovered ones are added by the health check)."""
    urls = []
    for entry in _entries(settings.FALKORDB_REPLICA_URLS):
        name, url = _named(entry, "FALKORDB_REPLICA_URLS")
        if name == server:
            urls.append(url)
    return urls


def placement_enabled() -> bool:
    """True when graphs can live on more than one primary (placement, moves, the moving fence)."""
    return len(falkordb_primaries()) > 1


def primary_url(server: str) -> str:
    """The URL of a primary; a graph placed on a server missing from the settings is a 503 naming it."""
    try:
        return falkordb_primaries()[server]
    except KeyError:
        raise ServiceUnavailable(
            f"The graph store server {server!r} that holds this graph is not configured here "
            f"(FALKORDB_PRIMARIES names: {', '.join(falkordb_primaries())}); nothing was read or written.",
            code="graph_store_unconfigured",
        ) from None


# --- clients ------------------------------------------------------------------------------------


def _where(url: str) -> str:
    """A URL without its credentials, for logs."""
    parts = urlsplit(url)
    return parts.path if parts.scheme == "unix" else parts.netloc.rpartition("@")[2]


def _is_sentinel(url: str) -> bool:
    return urlsplit(url).scheme in SENTINEL_SCHEMES


def _sentinel(url: str) -> tuple[Sentinel, str]:
    """The Sentinel client and service name of a sentinel:// URL (cached per process)."""
    found = _sentinels.get(url)
    if found is None:
        parts = urlsplit(url)
        service = parts.path.strip("/")
        hosts = []
        for hostport in parts.netloc.rpartition("@")[2].split(","):
            host, _, port = hostport.rpartition(":")
            hosts.append((host or hostport, int(port or 26379)))
        if not service or not hosts:
            raise ImproperlyConfigured(f"A Sentinel URL needs sentinel://host:port[,host:port]/service; got {url!r}.")
        sentinel = Sentinel(
            hosts,
            socket_timeout=settings.FALKORDB_SOCKET_TIMEOUT,
            socket_connect_timeout=2,
            sentinel_kwargs={"socket_timeout": 1, "socket_connect_timeout": 1},
        )
        found = _sentinels[url] = (sentinel, service)
    return found


def _make_client(url: str, *, replica: bool = False) -> FalkorDB:
    if _is_sentinel(url):
        from falkordb.sentinel import FalkorDBSentinelManagedConnection

        sentinel, service = _sentinel(url)
        # falkordb-py's Sentinel connection asks Sentinel for the master on every reconnect, so the client follows
        # a failover (redis-py alone would retry the old address).
        master = sentinel.master_for(
            service,
            connection_class=FalkorDBSentinelManagedConnection,
            decode_responses=True,
            max_connections=64,
        )
        return FalkorDB(connection_pool=master.connection_pool)
    # A replica that is down is skipped at once (the primary serves): no reconnect retries with backoff, which
    # would hold every read for seconds; the primary keeps redis-py's retries.
    extra: dict[str, Any] = {"retry": Retry(NoBackoff(), 0)} if replica else {}
    pool = redis.ConnectionPool.from_url(
        url,
        socket_timeout=settings.FALKORDB_SOCKET_TIMEOUT,
        socket_connect_timeout=1 if replica else 2,
        decode_responses=True,
        max_connections=64,
        **extra,
    )
    return FalkorDB(connection_pool=pool)


def _client_for(url: str, *, replica: bool = False) -> FalkorDB:
    client = _clients.get(url)
    if client is None:
        with _lock:
            client = _clients.get(url)
            if client is None:
                client = _clients[url] = _make_client(url, replica=replica)
    return client


def falkordb_client(server: str = DEFAULT) -> FalkorDB:
    """The process-wide FalkorDB client of a primary (``default``: FALKORDB_URL or its Sentinel service)."""
    return _client_for(primary_url(server))


def falkordb_ping() -> bool:
    """True when the graph store answers; raises redis errors when it does not."""
    return bool(falkordb_client().connection.ping())


# --- replicas -------------------------------------------------------------------------------------


@dataclass
class _Health:
    checked: float
    healthy: list[str]


_health: dict[str, _Health] = {}
_round_robin = itertools.count()


def replica_lag(primary_info: dict[str, Any], replica_info: dict[str, Any]) -> int | None:
    """How many bytes of the primary's replication stream the replica has not applied; None when it is not a
    working replica (not a replica, or its link to the primary is down)."""
    if replica_info.get("role") != "slave" or replica_info.get("master_link_status") != "up":
        return None
    return max(0, int(primary_info.get("master_repl_offset", 0)) - int(replica_info.get("slave_repl_offset", 0)))


def _replica_candidates(server: str) -> list[str]:
    urls = falkordb_replica_urls(server)
    url = primary_url(server)
    if not urls and _is_sentinel(url):
        sentinel, service = _sentinel(url)
        try:
            urls = [f"redis://{host}:{port}" for host, port in sentinel.discover_slaves(service)]
        except redis.RedisError:
            urls = []
    return urls


def _check(server: str) -> list[str]:
    candidates = _replica_candidates(server)
    if not candidates:
        return []
    try:
        primary_info = falkordb_client(server).connection.info("replication")
    except (redis.RedisError, OSError):
        return []  # the primary is down: reads through it fail with the store's own 503, replicas stay unused
    healthy = []
    for url in candidates:
        try:
            lag = replica_lag(primary_info, _client_for(url, replica=True).connection.info("replication"))
        except (redis.RedisError, OSError):
            lag = None
        if lag is not None and lag <= settings.FALKORDB_REPLICA_MAX_LAG_BYTES:
            healthy.append(url)
        else:
            logger.info("falkordb replica %s of %s skipped (lag %s)", _where(url), server, lag)
    return healthy


def healthy_replicas(server: str) -> list[str]:
    """The replica URLs of a primary that may serve reads now (cached FALKORDB_REPLICA_CHECK_SECONDS)."""
    if not settings.FALKORDB_REPLICA_URLS and not _is_sentinel(primary_url(server)):
        return []
    now = time.monotonic()
    health = _health.get(server)
    if health is None or now - health.checked >= settings.FALKORDB_REPLICA_CHECK_SECONDS:
        health = _health[server] = _Health(checked=now, healthy=_check(server))
    return health.healthy


def replica_failed(server: str, url: str) -> None:
    """A read on replica url failed: leave it out until the next check."""
    health = _health.get(server)
    if health is not None and url in health.healthy:
        health.healthy = [u for u in health.healthy if u != url]
    logger.warning("falkordb replica %s of %s failed a read; the primary serves", _where(url), server)


def falkordb_read_client(server: str = DEFAULT) -> tuple[FalkorDB, str | None]:
    """The client a read should use: a healthy replica's (round robin) with its URL, else the primary's and None."""
    healthy = healthy_replicas(server)
    if healthy:
        url = healthy[next(_round_robin) % len(healthy)]
        return _client_for(url, replica=True), url
    return falkordb_client(server), None


def replicas_catch_up(server: str = DEFAULT, *, timeout: float = 2.0) -> bool:
    """Wait (bounded) until the healthy replicas of a primary have applied everything written to it so far, so a
    document marked processed is found by the next search wherever it reads. True when they all caught up."""
    healthy = healthy_replicas(server)
    if not healthy:
        return True
    try:
        target = int(falkordb_client(server).connection.info("replication").get("master_repl_offset", 0))
    except (redis.RedisError, OSError):
        return False
    deadline = time.monotonic() + timeout
    pending = list(healthy)
    while pending:
        still = []
        for url in pending:
            try:
                info = _client_for(url, replica=True).connection.info("replication")
            except (redis.RedisError, OSError):
                replica_failed(server, url)
                continue
            if int(info.get("slave_repl_offset", 0)) < target:
                still.append(url)
        pending = still
        if not pending:
            return True
        if time.monotonic() >= deadline:
            for url in pending:  # too far behind: reads skip it until the next check says otherwise
                replica_failed(server, url)
            return False
        time.sleep(0.01)
    return True


def falkordb_reset() -> None:
    """Forget every client and health record (tests that change the topology settings)."""
    with _lock:
        for client in _clients.values():
            client.connection.connection_pool.disconnect()
        _clients.clear()
        _sentinels.clear()
        _health.clear()
