"""The request gate (exograph.core.middleware.RequestGateMiddleware) on the real ASGI app under uvicorn, with a
pool of 3 PostgreSQL connections: many more slow requests than connections all succeed (they wait for a slot,
not for a connection); without the gate the same burst gets 503s from the pool; a request that gets no slot in
time is a clear 503 server_busy with Retry-After; the health endpoints answer while the gate is full."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

import httpx
import pytest
from django.db import connection

from tests.core.gate_urls import Holding
from tests.live import LiveServer

POOL_SIZE = 3
BURST = 8  # requests at once, each holding a connection for a second


def _set_pool(options: dict[str, object] | None) -> None:
    connection.close()
    connection.close_pool()  # the next connection builds the pool from OPTIONS["pool"]
    connection.settings_dict["OPTIONS"]["pool"] = options


@pytest.fixture
def tiny_pool(transactional_db) -> Iterator[None]:  # type: ignore[no-untyped-def]
    """PostgreSQL connections from a pool of 3; a request waits at most 0.2 s for one."""
    saved = connection.settings_dict["OPTIONS"]["pool"]
    _set_pool({"min_size": 0, "max_size": POOL_SIZE, "timeout": 0.2})
    try:
        yield
    finally:
        _set_pool(saved)


@pytest.fixture
def serve(tiny_pool, settings) -> Iterator[Callable[..., LiveServer]]:  # type: ignore[no-untyped-def]
    """Start the service with a gate of `slots` (0: none) and a queue timeout; stopped at the end."""
    settings.ROOT_URLCONF = "tests.core.gate_urls"
    Holding.reset()
    started: list[LiveServer] = []

    def start(*, slots: int, queue_timeout: float = 120.0) -> LiveServer:
        # A server's gate is sized from these on its first request (each server runs its own event loop).
        settings.REQUEST_CONCURRENCY = slots
        settings.REQUEST_QUEUE_TIMEOUT_SECONDS = queue_timeout
        started.append(LiveServer(lifespan="off"))
        started[-1].start()
        return started[-1]

    try:
        yield start
    finally:
        Holding.release.set()
        for live in started:
            live.stop()


async def _burst(url: str, count: int) -> list[httpx.Response]:
    async with httpx.AsyncClient(base_url=url, timeout=120) as client:
        return list(await asyncio.gather(*(client.get("/api/v1/test-gate/hold") for _ in range(count))))


def test_a_burst_past_the_pool_waits_for_slots_and_every_request_succeeds(serve):
    live = serve(slots=POOL_SIZE - 1)  # the settings' rule for a pool of 3
    responses = asyncio.run(_burst(live.url, BURST))
    assert [r.status_code for r in responses] == [200] * BURST
    assert Holding.most == POOL_SIZE - 1  # never more inside Django than the gate lets in


def test_without_the_gate_the_same_burst_runs_the_pool_dry(serve):
    # The control: what the gate prevents. Every request enters Django and the ones past 3 wait in the pool.
    live = serve(slots=0)
    responses = asyncio.run(_burst(live.url, BURST))
    codes = [r.json()["error"]["code"] for r in responses if r.status_code == 503]
    assert codes and set(codes) == {"database_unavailable"}
    assert Holding.most == POOL_SIZE


def test_no_slot_in_time_is_a_clear_503_and_health_still_answers(serve):
    live = serve(slots=1, queue_timeout=0.5)

    async def scenario() -> list[httpx.Response]:
        async with httpx.AsyncClient(base_url=live.url, timeout=120) as client:
            holder = asyncio.create_task(client.get("/api/v1/test-gate/hold", params={"until": "released"}))
            assert await asyncio.to_thread(Holding.entered.wait, 60)  # the one slot is taken
            during = [
                await client.get(url) for url in ("/api/v1/test-gate/hold", "/accounts/login/", "/healthz", "/readyz")
            ]
            Holding.release.set()
            return [await holder, *during]

    held, refused, page, healthz, readyz = asyncio.run(scenario())
    assert held.status_code == 200
    assert refused.status_code == 503
    assert refused.headers["Retry-After"] == "5"
    error = refused.json()["error"]
    assert error["code"] == "server_busy" and error["retry_after"] == 5
    assert "nothing was charged" in error["message"]
    assert page.status_code == 503 and page.headers["Retry-After"] == "5" and "busy" in page.text
    assert healthz.status_code == 200
    assert readyz.status_code == 200 and readyz.json()["status"] == "ok"
