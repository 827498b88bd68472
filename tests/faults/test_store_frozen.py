"""The embedded store frozen (SIGSTOP: it accepts connections and never answers), issue 23 §5.

In the embedded default Redis, the rate limiter's Redis and the FalkorDB graph store are one redis-server. Before,
/readyz ran its checks one after the other on their socket timeouts (14.7 s) and reported `falkordb: ok` and
`ratelimit_redis: ok` beside `redis: unavailable`; every API request answered `ratelimit_unavailable`, naming the
rate limiter's Redis rather than the store. Now each check is bounded and they run at once, a frozen shared server
is one named cause with every component it serves marked `timeout`, and a request says the store is down, once.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest

from exograph.core.embedded import EmbeddedFalkorDB
from exograph.core.env import redis_db_url

pytestmark = [pytest.mark.faults, pytest.mark.django_db]

STORE = ("redis", "ratelimit_redis", "falkordb")


@pytest.fixture
def frozen_store(settings, throwaway_store: EmbeddedFalkorDB) -> Iterator[EmbeddedFalkorDB]:
    """A throwaway server standing in for the embedded one (all three URLs on its socket), frozen by SIGSTOP."""
    settings.EMBEDDED_SOCKET = throwaway_store.socket_path
    settings.REDIS_URL = throwaway_store.url
    settings.FALKORDB_URL = throwaway_store.url
    settings.RATELIMIT_REDIS_URL = redis_db_url(throwaway_store.url, 3)
    settings.READYZ_CHECK_TIMEOUT = 0.5
    settings.BILLING_RATELIMIT_TIMEOUT = 0.5
    process = throwaway_store.process
    assert process is not None
    process.send_signal(signal.SIGSTOP)
    try:
        yield throwaway_store
    finally:
        process.send_signal(signal.SIGCONT)


def test_readyz_names_the_frozen_embedded_store_once_with_each_check_timed_out(client, frozen_store):
    response = client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert {name: body["checks"][name] for name in STORE} == dict.fromkeys(STORE, "timeout")
    assert body["checks"]["sql"] == "ok"
    message = body["error"]["message"]
    assert message.count("the embedded FalkorDB/Redis server") == 1, message
    assert "did not answer within 0.5 s" in message
    for name in ("Redis", "FalkorDB graph store", "rate limiter"):
        assert name in message


def test_a_request_meeting_the_frozen_store_names_the_store_not_the_rate_limiter(alice_client, frozen_store):
    response = alice_client.get("/api/v1/me/")
    assert response.status_code == 503
    error = response.json()["error"]
    assert error["code"] == "store_unavailable"
    assert "the embedded FalkorDB/Redis server" in error["message"] and "rate limiter's Redis" not in error["message"]
    assert error["unavailable"] == "store" and response["Retry-After"] == str(error["retry_after"])
    assert "nothing was charged" in error["message"]
