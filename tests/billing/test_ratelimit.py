"""Rate limits: sliding windows exact under concurrency and across window edges, headers on every
answer, 503 without Redis, never-evicted counters, per-address throttles of anonymous endpoints."""

from __future__ import annotations

import pytest
import redis
from django.test import Client
from rest_framework.test import APIClient

from billing.ratelimit import plan_limits, ratelimit_hit
from exograph.accounts.models import User
from exograph.accounts.services import api_key_create
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


T0 = 1_800_000_000_000  # a fixed clock (ms) for the window tests; 60_000-aligned


def _passed_in_any_window(times: list[int], window_ms: int) -> int:
    """The most requests of `times` inside any half-open window of window_ms."""
    times = sorted(times)
    return max((sum(1 for t in times if start <= t < start + window_ms) for start in times), default=0)


@pytest.mark.django_db
def test_burst_across_a_minute_edge_never_passes_more_than_the_limit_in_any_60_s():
    user = UserFactory()
    allowed: list[int] = []
    # One request opens the (old, fixed) window, 59 more at its very end, then 60 at the start of the next.
    plan = [T0] + [T0 + 59_900] * 59 + [T0 + 60_100] * 60 + [T0 + 119_899] * 5 + [T0 + 119_900] * 70
    results = []
    for now in plan:
        result = ratelimit_hit(user_id=user.pk, now_ms=now)
        results.append((now, result))
        if result.allowed:
            allowed.append(now)
    assert _passed_in_any_window(allowed, 60_000) == 60
    at_edge = [r for now, r in results if now == T0 + 60_100]
    assert sum(r.allowed for r in at_edge) == 1  # only the slot of the request at T0 has freed
    refused = next(r for r in at_edge if not r.allowed)
    assert refused.window == "minute" and refused.remaining == 0
    assert refused.retry_after == 60  # the 59 requests of T0+59.9 s leave the window at T0+119.9 s
    assert sum(r.allowed for now, r in results if now == T0 + 119_899) == 0
    assert sum(r.allowed for now, r in results if now == T0 + 119_900) == 59
    assert len(allowed) == 1 + 59 + 1 + 59


@pytest.mark.django_db
def test_day_window_slides_across_the_day_edge(settings):
    settings.BILLING_PLANS = {**settings.BILLING_PLANS, "standard": {"per_minute": 50, "per_day": 5}}
    user = UserFactory()
    day = 86_400_000
    plan = [T0] + [T0 + day - 100] * 4 + [T0 + day + 100] * 5
    allowed = [now for now in plan if ratelimit_hit(user_id=user.pk, now_ms=now).allowed]
    assert allowed == [T0] + [T0 + day - 100] * 4 + [T0 + day + 100]  # only the slot of T0 has freed
    refused = ratelimit_hit(user_id=user.pk, now_ms=T0 + day + 200)
    assert not refused.allowed and refused.window == "day" and refused.limit == 5
    assert refused.retry_after == 86_400  # the four of T0+day-0.1 s leave the window at T0+2day-0.1 s
    later = [T0 + 2 * day - 100] * 5
    allowed += [now for now in later if ratelimit_hit(user_id=user.pk, now_ms=now).allowed]
    assert allowed[-4:] == [T0 + 2 * day - 100] * 4
    assert _passed_in_any_window(allowed, day) == 5


@pytest.mark.django_db
def test_readyz_fails_while_the_ratelimit_redis_may_evict_counters(client, settings):
    import tempfile
    from pathlib import Path

    from exograph.core.embedded import EmbeddedFalkorDB

    assert client.get("/readyz").json()["checks"]["ratelimit_redis"] == "ok"  # the default policy: noeviction
    with tempfile.TemporaryDirectory(prefix="exo-rl-", dir="/tmp") as directory:  # a short unix socket path
        evicting = EmbeddedFalkorDB.in_directory(Path(directory))  # its own server: no other test is affected
        evicting.start()
        try:
            limits = redis.Redis.from_url(evicting.url)
            limits.config_set("maxmemory-policy", "allkeys-lru")
            limits.close()
            settings.RATELIMIT_REDIS_URL = evicting.url
            response = client.get("/readyz")
        finally:
            evicting.stop()
    assert response.status_code == 503
    body = response.json()
    assert body["checks"]["ratelimit_redis"].startswith("unavailable")
    assert body["checks"]["sql"] == body["checks"]["redis"] == "ok"
    assert "noeviction" in body["error"]["message"]


def _signup(client: Client, n: int, address: str):  # type: ignore[no-untyped-def]
    password = "a-very-long-pw-1"
    return client.post(
        "/signup/",
        {"email": f"farm{n}@example.com", "password": password, "password_confirm": password},
        REMOTE_ADDR=address,
    )


@pytest.mark.django_db
def test_signups_are_throttled_per_address(settings):
    settings.ANON_THROTTLES = {
        **settings.ANON_THROTTLES,
        "signup": {"per_window": 3, "window_seconds": 3600, "per_day": 20},
    }
    for n in range(3):
        assert _signup(Client(), n, "203.0.113.7").status_code == 302
    refused = _signup(Client(), 3, "203.0.113.7")
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 3600
    assert b"Too many attempts from your address (3 per hour)" in refused.content
    assert not User.objects.filter(email="farm3@example.com").exists()
    assert _signup(Client(), 4, "198.51.100.2").status_code == 302  # another address is not affected


@pytest.mark.django_db
def test_failed_api_keys_are_throttled_per_address_even_for_a_then_valid_key(alice, alice_client, settings):
    settings.ANON_THROTTLES = {
        **settings.ANON_THROTTLES,
        "api_key": {"per_window": 3, "window_seconds": 60, "per_day": 100},
    }
    valid = alice_client._credentials["HTTP_AUTHORIZATION"]
    guesser = APIClient(REMOTE_ADDR="203.0.113.9")
    for n in range(3):
        wrong = guesser.get("/api/v1/me/", HTTP_AUTHORIZATION=f"Bearer exo_guess{n:04d}_nope")
        assert wrong.status_code == 401
    refused = guesser.get("/api/v1/me/", HTTP_AUTHORIZATION=valid)
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "api_key_throttled"
    assert 1 <= int(refused["Retry-After"]) <= 60
    other = APIClient(REMOTE_ADDR="198.51.100.3").get("/api/v1/me/", HTTP_AUTHORIZATION=valid)
    assert other.status_code == 200
    for _ in range(5):  # successes from an address never count against it
        assert APIClient(REMOTE_ADDR="198.51.100.4").get("/api/v1/me/", HTTP_AUTHORIZATION=valid).status_code == 200


def _guess_until_throttled(address: str, settings) -> None:  # type: ignore[no-untyped-def]
    settings.ANON_THROTTLES = {
        **settings.ANON_THROTTLES,
        "api_key": {"per_window": 3, "window_seconds": 60, "per_day": 100},
    }
    guesser = APIClient(REMOTE_ADDR=address)
    for n in range(3):
        assert guesser.get("/api/v1/me/", HTTP_AUTHORIZATION=f"Bearer exo_guess{n:04d}_nope").status_code == 401


@pytest.mark.django_db
def test_a_right_read_only_key_over_the_address_limit_gets_429_not_its_403(alice, settings):
    """The failed-key check of a right key is left to the account throttle (one round trip with the account's count);
    a permission refusal before that throttle must still answer 429 like a wrong key, never the read-only key's 403."""
    secret = api_key_create(actor=alice, name="reader", read_only=True).secret
    elsewhere = APIClient(REMOTE_ADDR="198.51.100.7")
    elsewhere.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert elsewhere.get("/api/v1/me/").status_code == 200  # the key is now in the lookup cache
    _guess_until_throttled("203.0.113.20", settings)
    reader = APIClient(REMOTE_ADDR="203.0.113.20")
    reader.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    write = reader.post("/api/v1/keys/", {"name": "more"}, format="json")
    assert write.status_code == 429 and write.json()["error"]["code"] == "api_key_throttled"
    assert 1 <= int(write["Retry-After"]) <= 60
    read = reader.get("/api/v1/me/")
    assert read.status_code == 429 and read.json()["error"]["code"] == "api_key_throttled"
    assert "RateLimit-Limit" not in read
    # Neither refusal counted against the account; the right key's write from elsewhere is still its 403.
    assert elsewhere.get("/api/v1/me/")["RateLimit-Remaining"] == "58"
    assert elsewhere.post("/api/v1/keys/", {"name": "more"}, format="json").json()["error"]["code"] == "key_read_only"


@pytest.mark.django_db
def test_a_right_key_on_a_view_without_the_account_throttle_is_refused_at_authentication(alice, alice_key, settings):
    from rest_framework.test import APIRequestFactory
    from rest_framework.views import APIView

    from exograph.accounts.authentication import ApiKeyAuthentication

    class Unthrottled(APIView):
        authentication_classes = [ApiKeyAuthentication]
        throttle_classes: list[type] = []

        def get(self, request):  # type: ignore[no-untyped-def]
            from rest_framework.response import Response

            return Response({"ok": True})

    def get(address: str):  # type: ignore[no-untyped-def]
        request = APIRequestFactory().get("/x/", HTTP_AUTHORIZATION=f"Bearer {alice_key}", REMOTE_ADDR=address)
        return Unthrottled.as_view()(request)

    assert get("198.51.100.8").status_code == 200  # cached
    _guess_until_throttled("203.0.113.21", settings)
    refused = get("203.0.113.21")
    assert refused.status_code == 429 and refused.data["error"]["code"] == "api_key_throttled"


@pytest.mark.django_db
def test_a_keyed_request_asks_the_limiter_once(alice_client, monkeypatch):
    """The failed-key check and the account's count are one script call (one Redis round trip) for a cached key."""
    from exograph.core import ratelimit

    calls: list[bool] = []
    real = ratelimit._run

    def counted(*, pair: bool, keys: list[str], args: list[int]):  # type: ignore[no-untyped-def]
        calls.append(pair)
        return real(pair=pair, keys=keys, args=args)

    assert alice_client.get("/api/v1/me/").status_code == 200  # the first request reads the key from the database
    monkeypatch.setattr(ratelimit, "_run", counted)
    assert alice_client.get("/api/v1/me/").status_code == 200
    assert calls == [True]
