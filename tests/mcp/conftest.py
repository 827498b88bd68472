"""The MCP bridge under test: the service served by uvicorn (lifespan on, as `make run` serves it) on a free
loopback port in a thread, and the SDK's real clients over streamable HTTP and over stdio."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from django.conf import settings
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.factories import graph_stores_drop, world_graph_row_ensure
from tests.live import LiveServer


@pytest.fixture(autouse=True)
def _world_graph_row(request) -> None:  # type: ignore[no-untyped-def]
    """The World Graph row of migration 0002: another transactional test's flush may have removed it."""
    if "transactional_db" not in request.fixturenames and "live_server_asgi" not in request.fixturenames:
        marker = request.node.get_closest_marker("django_db")
        if marker is None or not marker.kwargs.get("transaction"):
            return
    request.getfixturevalue("transactional_db")
    world_graph_row_ensure()


@pytest.fixture
def live_server_asgi(transactional_db) -> Iterator[LiveServer]:  # type: ignore[no-untyped-def]
    server = LiveServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()
        # FalkorDB outlives the test's database: drop the graphs it wrote (the world graph's too).
        graph_stores_drop()


@pytest.fixture(autouse=True)
def _fresh_channel_layer() -> Iterator[None]:
    """A new channel layer per test: a layer's Redis connections belong to the event loop that made them."""
    from channels.layers import channel_layers

    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()


@asynccontextmanager
async def mcp_http(
    url: str, *, key: str | None, scope: str | None = None, **headers: str
) -> AsyncIterator[ClientSession]:
    """An initialized SDK ClientSession over streamable HTTP at url, with the API key as Bearer."""
    sent = dict(headers)
    if key is not None:
        sent["Authorization"] = f"Bearer {key}"
    if scope is not None:
        sent["X-Graph-Scope"] = scope
    async with httpx2.AsyncClient(headers=sent, timeout=httpx2.Timeout(180.0)) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


def mcp_run(opener: Any, steps: Any) -> dict[str, Any]:
    """Run `await steps(mcp, out)` in the MCP session opener opens (mcp_http, mcp_stdio); returns out."""
    out: dict[str, Any] = {}

    async def run() -> None:
        async with opener as mcp:
            await steps(mcp, out)

    anyio.run(run)
    return out


def mcp_story(url: str, key: str, steps, *, stdio: bool = False, **kwargs: str) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """Run `await steps(mcp, out)` in one MCP session (streamable HTTP at url/mcp, or the stdio bridge); returns out."""
    return mcp_run(mcp_stdio(url, key=key, **kwargs) if stdio else mcp_http(f"{url}/mcp", key=key, **kwargs), steps)


def console_script() -> list[str]:
    """`exograph-mcp` as installed by `make` (.venv/bin), else the checkout's wrapper of the same entry point."""
    installed = Path(sys.executable).parent / "exograph-mcp"
    if installed.exists():
        return [str(installed)]
    return [sys.executable, str(settings.BASE_DIR / "scripts" / "exograph-mcp")]


@asynccontextmanager
async def mcp_stdio(
    api_url: str, *, key: str, scope: str | None = None, errlog: Any = None, **env_overrides: str
) -> AsyncIterator[ClientSession]:
    """An initialized SDK ClientSession with `exograph-mcp` spawned over stdio against api_url."""
    command = console_script()
    env = {k: v for k, v in os.environ.items() if not k.startswith("EXOGRAPH_")}
    env.update(EXOGRAPH_API_URL=api_url, EXOGRAPH_API_KEY=key, EXOGRAPH_MCP_UPLOAD_WAIT_SECONDS="120")
    # The code of this checkout, even when .venv (and its editable install) belongs to another one.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(settings.BASE_DIR), env.get("PYTHONPATH", "")) if p)
    if scope is not None:
        env["EXOGRAPH_GRAPH_SCOPE"] = scope
    env.update(env_overrides)
    params = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=str(settings.BASE_DIR))
    async with stdio_client(params, errlog=errlog or sys.stderr) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


def fixture_copy(tmp_path: Path, relative: str) -> Path:
    """A fixture document copied under tmp_path (the upload root in hosted tests)."""
    from tests.documents.conftest import fixtures_dir

    target = tmp_path / Path(relative).name
    shutil.copyfile(fixtures_dir() / relative, target)
    return target
