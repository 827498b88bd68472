"""The FalkorDB connection: one client (and connection pool) per process and URL."""

from __future__ import annotations

import threading

import redis
from django.conf import settings
from falkordb import FalkorDB

_lock = threading.Lock()
_clients: dict[str, FalkorDB] = {}


def falkordb_client() -> FalkorDB:
    """The process-wide FalkorDB client for settings.FALKORDB_URL (redis://, rediss:// or unix://)."""
    url = settings.FALKORDB_URL
    client = _clients.get(url)
    if client is None:
        with _lock:
            client = _clients.get(url)
            if client is None:
                pool = redis.ConnectionPool.from_url(
                    url,
                    socket_timeout=settings.FALKORDB_SOCKET_TIMEOUT,
                    socket_connect_timeout=2,
                    decode_responses=True,
                    max_connections=64,
                )
                client = FalkorDB(connection_pool=pool)
                _clients[url] = client
    return client


def falkordb_ping() -> bool:
    """True when the graph store answers; raises redis errors when it does not."""
    return bool(falkordb_client().connection.ping())
