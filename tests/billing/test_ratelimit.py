"""Per-account rate limits: exact under concurrency, headers on every answer, 503 without Redis."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from billing.ratelimit import plan_limits, ratelimit_hit
from tests.billing.conftest import run_concurrently
from tests.factories import UserFactory


def _headers_ok(response, *, limit: int) -> None:
    assert response["RateLimit-Limit"] == str(limit)
    assert 0 <= int(response["RateLimit-Remaining"]) <= limit
    assert 1 <= int(response["RateLimit-Reset"]) <= 60


@pytest.mark.django_db
def test_allowed_response_carries_ratelimit_headers(alice_client):
    response = alice_client.get("/api/v1/me/")
    assert response.status_code == 200
    _headers_ok(response, limit=60)
    assert response["RateLimit-Remaining"] == "59"
    assert alice_client.get("/api/v1/billing/balance").status_code == 200  # any endpoint counts
    assert alice_client.get("/api/v1/me/")["RateLimit-Remaining"] == "57"


@pytest.mark.django_db
def test_all_keys_and_the_session_share_one_limit(alice, api_client_for, client, settings):
    settings.BILLING_PLANS = {**settings.BILLING_PLANS, "standard": {"per_minute": 3, "per_day": 100}}
    first, second = api_client_for(alice), api_client_for(alice)
    assert first.get("/api/v1/me/").status_code == 200
    assert second.get("/api/v1/me/").status_code == 200
    client.force_login(alice)
    assert client.get("/api/v1/me/").status_code == 200
    refused = first.get("/api/v1/me/")
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "rate_limited"


@pytest.mark.django_db
def test_unauthenticated_requests_are_not_counted(alice_client, anon_client):
    for _ in range(3):
        assert anon_client.get("/api/v1/me/").status_code == 401
    assert alice_client.get("/api/v1/me/")["RateLimit-Remaining"] == "59"


@pytest.mark.django_db
def test_day_limit_refuses_with_retry_after(alice_client, settings):
    settings.BILLING_PLANS = {**settings.BILLING_PLANS, "standard": {"per_minute": 50, "per_day": 2}}
    alice_client.get("/api/v1/me/")
    last = alice_client.get("/api/v1/me/")
    assert last["RateLimit-Limit"] == "2" and last["RateLimit-Remaining"] == "0"
    refused = alice_client.get("/api/v1/me/")
    assert refused.status_code == 429
    assert refused["RateLimit-Limit"] == "2" and refused["RateLimit-Remaining"] == "0"
    assert 60 < int(refused["Retry-After"]) <= 86400
    assert "per day" in refused.json()["error"]["message"]


@pytest.mark.django_db
def test_redis_down_is_503_naming_redis_never_unlimited(alice_client, settings):
    settings.RATELIMIT_REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    response = alice_client.get("/api/v1/me/")
    assert response.status_code == 503
    error = response.json()["error"]
    assert error["code"] == "ratelimit_unavailable" and "Redis" in error["message"]


@pytest.mark.django_db
def test_stripe_webhook_is_not_rate_limited_per_account(client, settings):
    settings.BILLING_PLANS = {**settings.BILLING_PLANS, "standard": {"per_minute": 1, "per_day": 1}}
    for _ in range(3):
        response = client.post("/api/v1/billing/webhooks/stripe/", data="{}", content_type="application/json")
        assert response.status_code in (400, 503)
        assert "RateLimit-Limit" not in response


@pytest.mark.django_db(transaction=True)
def test_200_concurrent_requests_exactly_60_pass(api_client_for):
    alice, bob = UserFactory(), UserFactory()
    alice_client, bob_client = api_client_for(alice), api_client_for(bob)
    assert bob_client.get("/api/v1/me/").status_code == 200  # bob's first request, before alice's burst
    auth = alice_client._credentials["HTTP_AUTHORIZATION"]

    def request(i: int):  # type: ignore[no-untyped-def]
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=auth)
        return client.get("/api/v1/me/")

    responses = [r for _, r in run_concurrently(request, 200, workers=30)]
    allowed = [r for r in responses if r.status_code == 200]
    refused = [r for r in responses if r.status_code == 429]
    assert len(allowed) == 60 and len(refused) == 140
    assert sorted(int(r["RateLimit-Remaining"]) for r in allowed) == list(range(60))
    for response in refused:
        assert response["RateLimit-Limit"] == "60" and response["RateLimit-Remaining"] == "0"
        assert 1 <= int(response["Retry-After"]) <= 60 and 1 <= int(response["RateLimit-Reset"]) <= 60
        assert response.json()["error"]["code"] == "rate_limited"
    other = bob_client.get("/api/v1/me/")
    assert other.status_code == 200 and other["RateLimit-Remaining"] == "58"


@pytest.mark.django_db(transaction=True)
def test_lua_counter_is_exact_with_truly_parallel_callers():
    """The Redis step alone, 200 threads at once on any database backend."""
    user = UserFactory()
    plan_limits(user_id=user.pk)  # warm the plan cache: the threads below touch only Redis
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=50) as pool:
        results = list(pool.map(lambda i: ratelimit_hit(user_id=user.pk), range(200)))
    assert sum(r.allowed for r in results) == 60
    assert sorted(r.remaining for r in results if r.allowed) == list(range(60))
