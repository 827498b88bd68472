"""Redis (the rate limiter's) down or hung: health answers, /readyz names Redis, every counted request is a 503
that says what is down and when to retry (Retry-After), nothing is charged or created; then recovery in-process.

The limiter fails closed on purpose: serving document status or balances uncounted during an outage would let
anyone bypass the rate limits by taking Redis down (or waiting for it to fail). Each test stops its own
throwaway server, never the session's."""

from __future__ import annotations

import base64
import signal
import time

import pytest

from billing.services import credit_balance, credits_grant_admin
from exograph.core.embedded import EmbeddedFalkorDB
from exograph.core.env import redis_db_url
from exograph.documents.models import Document
from tests.documents.conftest import fixture_bytes

pytestmark = [pytest.mark.faults, pytest.mark.django_db]

URL = "/api/v1/documents/"


@pytest.fixture
def own_limiter_redis(settings, throwaway_store: EmbeddedFalkorDB) -> EmbeddedFalkorDB:
    """The rate limiter's Redis (and the Redis /readyz checks) is the throwaway server."""
    settings.RATELIMIT_REDIS_URL = redis_db_url(throwaway_store.url, 3)
    settings.REDIS_URL = throwaway_store.url
    settings.BILLING_RATELIMIT_TIMEOUT = 1.0
    return throwaway_store


def _upload(client):  # type: ignore[no-untyped-def]
    payload = {
        "file_content_base64": base64.b64encode(fixture_bytes("pdf/sf_pdflatex-4-pages.pdf")).decode(),
        "filename": "small.pdf",
    }
    return client.post(URL, payload, format="json")


def _assert_redis_503(response, *, within: float, started: float) -> None:  # type: ignore[no-untyped-def]
    assert time.monotonic() - started < within, "the request waited on the dead Redis"
    assert response.status_code == 503, response.content
    error = response.json()["error"]
    assert error["code"] == "ratelimit_unavailable" and "Redis" in error["message"]
    assert response["Retry-After"] == "5" and error["retry_after"] == 5 and error["unavailable"] == "redis"
    assert "nothing was charged" in error["message"]


@pytest.mark.parametrize("fault", ["killed", "hung"])
def test_redis_down_health_answers_counted_requests_are_503_with_retry_after_and_nothing_is_charged(
    client, alice, alice_client, own_limiter_redis, fault
):
    credits_grant_admin(account=alice, amount=100, actor=None, note="tests")
    document = _upload(alice_client).json()  # queued (the test's transaction keeps its pipeline from starting)
    balance = credit_balance(account=alice)
    ok = alice_client.get(f"{URL}{document['id']}/")
    assert ok.status_code == 200 and "RateLimit-Remaining" in ok
    process = own_limiter_redis.process
    assert process is not None
    if fault == "killed":
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    else:
        process.send_signal(signal.SIGSTOP)  # accepts connections, never answers
    try:
        assert client.get("/healthz").status_code == 200
        started = time.monotonic()
        ready = client.get("/readyz")
        assert ready.status_code == 503 and "Redis" in ready.json()["error"]["message"]
        for request in (
            lambda: alice_client.get(f"{URL}{document['id']}/"),
            lambda: alice_client.get("/api/v1/me/"),
            lambda: _upload(alice_client),
        ):
            started = time.monotonic()
            _assert_redis_503(request(), within=10.0, started=started)
        assert credit_balance(account=alice) == balance  # the refused upload charged nothing
        assert Document.objects.filter(owner=alice).count() == 1  # and created nothing
    finally:
        if fault == "hung":
            process.send_signal(signal.SIGCONT)
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=10)
    own_limiter_redis.start()  # back (the supervisor restarts it); no web process restart

    again = alice_client.get(f"{URL}{document['id']}/")
    assert again.status_code == 200 and again.json()["id"] == document["id"] and "RateLimit-Remaining" in again
    assert client.get("/readyz").status_code == 200
