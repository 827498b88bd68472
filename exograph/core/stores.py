"""Which server a Redis/FalkorDB URL points at: in the embedded default the graph store, the rate limiter, the
cache, the channel layer and the broker are one redis-server (databases 0-4 of one unix socket), and a failure
of it is one cause, named once (/readyz, the error envelope)."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings

from exograph.core.errors import ServiceUnavailable


def server_of(url: str) -> str:
    """A server's identity, without credentials or database: its unix socket path, or host:port."""
    parts = urlsplit(url)
    if parts.scheme in {"unix", "redis+socket"}:
        return parts.path
    return f"{parts.hostname or 'localhost'}:{parts.port or 6379}"


def server_label(url: str) -> str:
    """How a message names the server of url."""
    server = server_of(url)
    if server == str(settings.EMBEDDED_SOCKET):
        return "the embedded FalkorDB/Redis server"
    return f"the server at {server}"


def shares_graph_store(url: str) -> bool:
    """True when url's server is also the graph store's (FALKORDB_URL): its outage is the whole store's."""
    return server_of(url) == server_of(settings.FALKORDB_URL)


def store_unavailable(url: str, retry_after: int) -> ServiceUnavailable:
    """The error of a request that met the shared store (graphs, rate limits, queues on one server) down: one
    cause, named once, whichever component noticed first."""
    label = server_label(url)
    return ServiceUnavailable(
        f"The data store ({label}, which holds the graphs, the rate limits and the task queue) is unreachable, "
        "so no request is served; nothing was charged or changed.",
        code="store_unavailable",
        hint=f"This is on our side and restarts by itself; retry in {retry_after} s (Retry-After). "
        "GET /healthz answers without it and /readyz names it.",
        extra={"unavailable": "store", "retry_after": retry_after},
        headers={"Retry-After": str(retry_after)},
    )
