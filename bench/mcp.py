"""`make bench-mcp`: search_entities through MCP (stdio and streamable HTTP) against the same REST call.

One run: the service (exograph.asgi:application, as `make run` serves it: uvicorn, lifespan on) on a
loopback port in a thread, on the database DATABASE_URL names (PostgreSQL in CI; a temporary SQLite
file without it) and an embedded FalkorDB/Redis. A text document is ingested first so the search
finds entities. Then, turn by turn so drift hits all alike:

- rest:       GET /api/v1/entities/search over HTTP (httpx, one keep-alive connection);
- mcp_http:   the SDK's client, call_tool("search_entities") at /mcp (the bridge calls REST in-process);
- mcp_stdio:  the SDK's client with `exograph-mcp` spawned over stdio (the bridge calls REST over HTTP).

The order rotates each round, so no variant is always first.

Each is timed from the caller's side until the full answer is read. Writes bench/results/mcp.json and
bench/results/mcp.md; the goal is MCP ≤ 1.2× REST (median).
"""

from __future__ import annotations

import json
import os
import platform
import socket
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# Run as a script, this file's directory leads sys.path and this module would shadow the `mcp` SDK.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(ROOT))

from bench.common import percentile, start_services  # noqa: E402

WARMUP = int(os.environ.get("BENCH_WARMUP", "10"))
REQUESTS = int(os.environ.get("BENCH_REQUESTS", "100"))
GOAL_RATIO = 1.2
QUERY = "Orbital Metrics Group"
ARTICLE = " ".join(
    f"The Project Falcon{n:02d} Initiative was reviewed by Orbital Metrics Group in Geneva with Dr Ines Varga."
    for n in range(40)
)


def main() -> int:
    server, tmp = start_services("exo-bench-mcp-", keep_database_url=True, keep_redis_url=True, eager_tasks=True)
    try:
        return run(tmp)
    finally:
        if server is not None:
            server.stop()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run(tmp: Path) -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "exograph.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.db import connection

    if connection.vendor != "sqlite":  # a throwaway database of its own, never a test run's
        connection.settings_dict["TEST"]["NAME"] = f"bench_mcp_{os.getpid()}"
    else:
        connection.settings_dict["TEST"]["NAME"] = str(tmp / "bench.sqlite3")
    db_name = connection.creation.create_test_db(verbosity=0, keepdb=False)
    # Every call is counted by the rate limiter (one Lua call), set high enough not to refuse.
    settings.BILLING_PLANS = {name: {"per_minute": 10**9, "per_day": 10**9} for name in settings.BILLING_PLANS}
    try:
        return _measure(settings)
    finally:
        if connection.vendor == "postgresql":  # the server's worker threads still hold connections to it
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> "
                    "pg_backend_pid()",
                    [connection.settings_dict["NAME"]],
                )
        connection.close()
        connection.creation.destroy_test_db(db_name, verbosity=0)


def _measure(settings: Any) -> int:
    import anyio
    import httpx
    import uvicorn

    from billing.services import credits_grant_admin
    from exograph.accounts.services import api_key_create, user_create
    from exograph.asgi import application

    user = user_create(email="bench-mcp@example.com", password=None, email_verified=True)
    credits_grant_admin(account=user, amount=10_000, actor=None, note="benchmark")
    key = api_key_create(actor=user, name="bench").secret

    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    server = uvicorn.Server(
        uvicorn.Config(application, host="127.0.0.1", port=port, lifespan="on", log_level="warning", log_config=None)
    )
    thread = threading.Thread(target=server.run, name="bench-uvicorn", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.05)
    try:
        headers = {"Authorization": f"Bearer {key}"}
        seeded = httpx.post(
            f"{url}/api/v1/documents/", json={"text": ARTICLE, "title": "Falcon review"}, headers=headers, timeout=120
        )
        if seeded.status_code != 201:
            raise RuntimeError(f"seeding failed: {seeded.status_code} {seeded.text[:300]}")
        times, hits = anyio.run(_rounds, url, key)
    finally:
        server.should_exit = True
        thread.join(timeout=30)

    def summary(values: list[float]) -> dict[str, float]:
        return {
            "median_ms": round(statistics.median(values), 3),
            "p95_ms": round(percentile(values, 95), 3),
            "mean_ms": round(statistics.fmean(values), 3),
        }

    stats = {name: summary(values) for name, values in times.items()}
    rest = stats["rest"]
    ratios = {
        name: {
            "median": round(s["median_ms"] / rest["median_ms"], 3),
            "p95": round(s["p95_ms"] / rest["p95_ms"], 3),
        }
        for name, s in stats.items()
        if name != "rest"
    }
    result = {
        "benchmark": "mcp: search_entities through MCP (stdio, streamable HTTP) vs the same REST call",
        "method": "uvicorn (lifespan on) in a thread; the three variants take turns call by call, the order "
        "rotating each round; "
        "timed at the caller until the whole answer is read",
        "query": QUERY,
        "hits_per_call": hits,
        "database": settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1],
        "requests_per_variant": REQUESTS,
        "warmup_per_variant": WARMUP,
        "latency_ms": stats,
        "ratio_vs_rest": ratios,
        "goal": f"MCP median <= {GOAL_RATIO}x REST",
        "meets_goal": {name: r["median"] <= GOAL_RATIO for name, r in ratios.items()},
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
    }
    labels = {
        "rest": "REST GET /api/v1/entities/search",
        "mcp_http": "MCP streamable HTTP /mcp",
        "mcp_stdio": "MCP stdio (exograph-mcp)",
    }
    rows = "".join(
        f"| {labels[name]} | {s['median_ms']} | {s['p95_ms']} | {s['mean_ms']} | "
        + (f"{ratios[name]['median']}× / {ratios[name]['p95']}×" if name in ratios else "1× / 1×")
        + " |\n"
        for name, s in stats.items()
    )
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "mcp.json").write_text(json.dumps(result, indent=2) + "\n")
    (out / "mcp.md").write_text(
        "# MCP overhead: search_entities vs REST\n\n"
        f"{result['method']}; database {result['database']}; {REQUESTS} calls per variant after {WARMUP} "
        f"warm-up calls; {hits} hits per call; {result['machine']}.\n\n"
        "| variant | median ms | p95 ms | mean ms | vs REST median / p95 |\n|---|---|---|---|---|\n"
        + rows
        + f"\nGoal: MCP median ≤ {GOAL_RATIO}× REST: "
        + ", ".join(f"{labels[n]} {'met' if ok else 'NOT met'}" for n, ok in result["meets_goal"].items())
        + ".\n"
    )
    print(json.dumps(result, indent=2))
    return 0


async def _rounds(url: str, key: str) -> tuple[dict[str, list[float]], int]:
    import httpx
    import httpx2
    from mcp import ClientSession, StdioServerParameters, stdio_client
    from mcp.client.streamable_http import streamable_http_client

    params = {"query": QUERY, "n_results": 10}
    env = {k: v for k, v in os.environ.items() if not k.startswith("EXOGRAPH_")}
    env.update(EXOGRAPH_API_URL=url, EXOGRAPH_API_KEY=key, EXOGRAPH_MCP_LOG_LEVEL="WARNING")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    stdio_params = StdioServerParameters(
        command=sys.executable, args=[str(ROOT / "scripts" / "exograph-mcp")], env=env, cwd=str(ROOT)
    )
    times: dict[str, list[float]] = {"rest": [], "mcp_http": [], "mcp_stdio": []}
    hits = 0
    auth = {"Authorization": f"Bearer {key}"}
    async with (
        httpx.AsyncClient(base_url=url, headers=auth, timeout=60) as rest,
        httpx2.AsyncClient(headers=auth, timeout=httpx2.Timeout(60.0)) as mcp_http_client,
        streamable_http_client(f"{url}/mcp", http_client=mcp_http_client) as (http_read, http_write),
        ClientSession(http_read, http_write) as over_http,
        stdio_client(stdio_params, errlog=sys.stderr) as (stdio_read, stdio_write),
        ClientSession(stdio_read, stdio_write) as over_stdio,
    ):
        await over_http.initialize()
        await over_stdio.initialize()

        async def call_rest() -> int:
            response = await rest.get("/api/v1/entities/search", params=params)
            response.raise_for_status()
            return len(response.json()["results"])

        async def call_mcp(session: ClientSession) -> int:
            answer = await session.call_tool("search_entities", params)
            if answer.is_error:
                raise RuntimeError(str(answer.content)[:300])
            return len((answer.structured_content or {}).get("results") or [])

        variants = {
            "rest": call_rest,
            "mcp_http": lambda: call_mcp(over_http),
            "mcp_stdio": lambda: call_mcp(over_stdio),
        }
        names = list(variants)
        for i in range(WARMUP + REQUESTS):
            # Each variant goes first in a third of the rounds: whatever the first call of a round pays
            # (e.g. the query's embedding before the service caches it) is shared out evenly.
            for name in names[i % 3 :] + names[: i % 3]:
                call = variants[name]
                start = time.perf_counter()
                found = await call()
                elapsed = (time.perf_counter() - start) * 1000
                hits = found
                if i >= WARMUP:
                    times[name].append(elapsed)
    return times, hits


if __name__ == "__main__":
    raise SystemExit(main())
