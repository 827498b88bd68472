"""`make bench-billing`: what auth + rate limit + charge add to a request.

One run, in-process (Django's test client, no network), on PostgreSQL: the database DATABASE_URL names,
else postgres://postgres@127.0.0.1:5432/exograph_bench (created when missing; a clear error naming the fix
when PostgreSQL cannot be reached; the run itself uses a throwaway database beside it, dropped at the end).
Set DATABASE_URL=sqlite:///path to measure SQLite on purpose. Redis: REDIS_URL (an embedded
redis-server + FalkorDB on a temporary socket without it). Endpoints that do the same
trivial work, layered:

- plain:                 no authentication, no throttle, no charge (the baseline);
- auth:                  API-key authentication only;
- auth_ratelimit:        + the per-account Redis rate limit (the project's defaults);
- auth_ratelimit_charge: + a real 3-credit charge: the door's Meter (dry_run, Idempotency-Key) over a
                         use case that charges under the request's money key, as chat does
                         (conditional UPDATE + ledger row, one committed statement);
- ..._async_commit:      the same with BILLING_CHARGE_SYNC_COMMIT=0 (no wait for the WAL fsync).

The variants take turns request by request so drift hits all alike. Writes bench/results/billing.json
and bench/results/billing.md; the target (issue 24) is a p50 overhead of at most 1.5 ms.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import percentile, postgres_database_ensure, start_services  # noqa: E402

WARMUP = int(os.environ.get("BENCH_WARMUP", "200"))
REQUESTS = int(os.environ.get("BENCH_REQUESTS", "2000"))
PROFILE = int(os.environ.get("BENCH_PROFILE", "0"))  # > 0: also profile that many metered requests
TARGET_P50_MS = 1.5
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/exograph_bench"


def database_url() -> str:
    """DATABASE_URL when set, else the PostgreSQL default (its database created when missing). Never SQLite by
    default: the overhead measured is the production backend's. Raises DatabaseUnavailable naming the fix."""
    url = os.environ.get("DATABASE_URL") or DEFAULT_DATABASE_URL
    if url.startswith(("postgres://", "postgresql://")):
        postgres_database_ensure(url)
    os.environ["DATABASE_URL"] = url
    return url


def main() -> int:
    database_url()
    server, tmp = start_services("exo-bench-", keep_database_url=True, keep_redis_url=True, eager_tasks=True)
    try:
        return run(tmp)
    finally:
        if server is not None:
            server.stop()


def run(tmp: Path) -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "exograph.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.db import connection
    from django.test.utils import setup_test_environment
    from django.urls import path
    from rest_framework.permissions import AllowAny
    from rest_framework.request import Request
    from rest_framework.response import Response
    from rest_framework.test import APIClient
    from rest_framework.views import APIView

    from billing.metering import Meter
    from billing.services import credit_balance, credits_charge, credits_grant_admin
    from exograph.accounts.authentication import ApiKeyAuthentication
    from exograph.accounts.services import api_key_create, user_create

    class PlainApi(APIView):
        authentication_classes: list[Any] = []
        permission_classes = [AllowAny]
        throttle_classes: list[Any] = []

        def post(self, request: Request) -> Response:
            return Response({"ok": True}, status=200)

    class AuthApi(APIView):
        authentication_classes = [ApiKeyAuthentication]
        throttle_classes: list[Any] = []

        def post(self, request: Request) -> Response:
            return Response({"ok": True}, status=200)

    class LimitedApi(APIView):  # the project defaults: API key + session auth, rate limit
        def post(self, request: Request) -> Response:
            return Response({"ok": True}, status=200)

    def trivial_paid(*, actor: Any, idempotency_key: str) -> dict[str, Any]:
        """A metered use case doing nothing but its charge (chat.snap, 3 credits)."""
        charge = credits_charge(account=actor, action="chat.snap", idempotency_key=idempotency_key)
        return {"ok": True, "credits_charged": charge.credits_charged, "balance": charge.balance}

    class MeteredApi(APIView):
        def post(self, request: Request) -> Response:
            meter = Meter.from_request(request, endpoint="bench.metered")
            return meter.run(  # type: ignore[return-value]
                lambda key: (trivial_paid(actor=meter.account, idempotency_key=key), 200)
            )

    module = sys.modules[__name__]
    module.urlpatterns = [  # type: ignore[attr-defined]
        path("plain/", PlainApi.as_view()),
        path("auth/", AuthApi.as_view()),
        path("limited/", LimitedApi.as_view()),
        path("metered/", MeteredApi.as_view()),
    ]
    setup_test_environment()
    settings.ROOT_URLCONF = module
    # The rate limit is counted (one Lua call per request) but set high enough not to refuse.
    settings.BILLING_PLANS = {name: {"per_minute": 10**9, "per_day": 10**9} for name in settings.BILLING_PLANS}
    # name -> (path, durable charge commit?)
    variants = {
        "plain": ("/plain/", True),
        "auth": ("/auth/", True),
        "auth_ratelimit": ("/limited/", True),
        "auth_ratelimit_charge": ("/metered/", True),
        "auth_ratelimit_charge_async_commit": ("/metered/", False),
    }
    if connection.vendor != "sqlite":  # a throwaway database of its own, never a test run's
        connection.settings_dict["TEST"]["NAME"] = f"bench_billing_{os.getpid()}"
    else:
        connection.settings_dict["TEST"]["NAME"] = str(tmp / "bench.sqlite3")
    db_name = connection.creation.create_test_db(verbosity=0, keepdb=False)
    try:
        user = user_create(email="bench@example.com", password=None, email_verified=True)
        credits_grant_admin(account=user, amount=10**9, actor=None, note="benchmark")
        key = api_key_create(actor=user, name="bench").secret
        anonymous, client = APIClient(), APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
        times: dict[str, list[float]] = {name: [] for name in variants}
        cpu: dict[str, list[float]] = {name: [] for name in variants}  # this thread's CPU time: no waiting
        before = credit_balance(account=user)
        for i in range(WARMUP + REQUESTS):
            for name, (url, durable) in variants.items():
                settings.BILLING_CHARGE_SYNC_COMMIT = durable
                caller = anonymous if name == "plain" else client
                start, start_cpu = time.perf_counter(), time.thread_time()
                response = caller.post(url)
                elapsed = (time.perf_counter() - start) * 1000
                used = (time.thread_time() - start_cpu) * 1000
                assert response.status_code == 200, response.content
                if i >= WARMUP:
                    times[name].append(elapsed)
                    cpu[name].append(used)
        charged = before - credit_balance(account=user)
        assert charged == 3 * 2 * (WARMUP + REQUESTS), charged
        if PROFILE:  # where a metered request's time goes (cProfile; its own run after the timed one)
            import cProfile
            import io
            import pstats

            # The request thread's CPU time (time.thread_time), not the wall clock: where Python spends it, without
            # the waits for PostgreSQL and Redis that a loaded machine stretches.
            profiler = cProfile.Profile(time.thread_time)
            settings.BILLING_CHARGE_SYNC_COMMIT = True
            profiler.enable()
            for _ in range(PROFILE):
                client.post("/metered/")
            profiler.disable()
            text = io.StringIO()
            profiled = pstats.Stats(profiler, stream=text).strip_dirs()
            profiled.sort_stats("cumulative").print_stats(60)
            profiled.sort_stats("tottime").print_stats(40)
            (ROOT / "bench" / "results" / "billing-profile.txt").write_text(
                f"# cProfile (CPU time) of {PROFILE} requests to the metered endpoint (auth + rate limit + charge)\n"
                + text.getvalue()
            )
    finally:
        connection.creation.destroy_test_db(db_name, verbosity=0)

    def summary(values: list[float]) -> dict[str, float]:
        return {
            "p50_ms": round(percentile(values, 50), 3),
            "p99_ms": round(percentile(values, 99), 3),
            "mean_ms": round(statistics.fmean(values), 3),
        }

    stats = {name: summary(values) for name, values in times.items()}
    cpu_p50 = {name: round(percentile(values, 50), 3) for name, values in cpu.items()}
    base = stats["plain"]
    overhead = {name: {k: round(v[k] - base[k], 3) for k in base} for name, v in stats.items() if name != "plain"}
    headline = overhead["auth_ratelimit_charge"]
    result = {
        "benchmark": "billing: auth + rate limit + charge per request",
        "method": "in-process Django test client; the five variants take turns request by request",
        "database": connection.vendor,
        "redis": "embedded redis-server (unix socket)" if "unix://" in settings.RATELIMIT_REDIS_URL else "REDIS_URL",
        "requests_per_variant": REQUESTS,
        "warmup_per_variant": WARMUP,
        "latency_ms": stats,
        "overhead_vs_plain_ms": overhead,
        # Python's own share: the request thread's CPU time (p50), without waiting for PostgreSQL or Redis.
        "cpu_p50_ms": cpu_p50,
        "cpu_overhead_vs_plain_p50_ms": {n: round(v - cpu_p50["plain"], 3) for n, v in cpu_p50.items() if n != "plain"},
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "target_p50_overhead_ms": TARGET_P50_MS,
        "meets_target": headline["p50_ms"] <= TARGET_P50_MS,
        "meets_target_with_async_commit": overhead["auth_ratelimit_charge_async_commit"]["p50_ms"] <= TARGET_P50_MS,
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
    }
    labels = {
        "plain": "plain (no auth, no limit, no charge)",
        "auth": "API key auth",
        "auth_ratelimit": "API key auth + rate limit (Redis Lua)",
        "auth_ratelimit_charge": "auth + rate limit + charge (durable commit, default)",
        "auth_ratelimit_charge_async_commit": "auth + rate limit + charge (BILLING_CHARGE_SYNC_COMMIT=0)",
    }
    rows = "".join(
        f"| {labels[name]} | {s_['p50_ms']} | {s_['p99_ms']} | {s_['mean_ms']} | "
        + (f"{overhead[name]['p50_ms']} / {overhead[name]['p99_ms']}" if name in overhead else "—")
        + " |\n"
        for name, s_ in stats.items()
    )
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "billing.json").write_text(json.dumps(result, indent=2) + "\n")
    (out / "billing.md").write_text(
        "# Billing overhead (auth + rate limit + charge)\n\n"
        f"{result['method']}; database {result['database']}, Redis: {result['redis']}; "
        f"{REQUESTS} requests per variant after {WARMUP} warm-up requests; {result['machine']}.\n\n"
        "| variant | p50 ms | p99 ms | mean ms | overhead p50 / p99 ms |\n|---|---|---|---|---|\n"
        + rows
        + f"\nTarget p50 overhead ≤ {TARGET_P50_MS} ms (auth + rate limit + charge, durable): "
        f"{'met' if result['meets_target'] else 'NOT met'}; with async commit: "
        f"{'met' if result['meets_target_with_async_commit'] else 'NOT met'}.\n"
    )
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
