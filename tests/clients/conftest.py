"""The Python client (clients/python, package exograph_client) against the real service: uvicorn serving
exograph.asgi on a free loopback port in a thread, on the test database (SQLite by default), eager Celery."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.factories import graph_stores_drop
from tests.graphs.conftest import write_doc  # noqa: F401 - fixture (test_graphrag's graph with known relations)
from tests.live import LiveServer

CLIENT_SOURCE = Path(__file__).resolve().parents[2] / "clients" / "python"
if str(CLIENT_SOURCE) not in sys.path:  # the package as a checkout has it, without installing it
    sys.path.insert(0, str(CLIENT_SOURCE))


@pytest.fixture
def live_url(settings, monkeypatch) -> Iterator[str]:  # type: ignore[no-untyped-def]
    # The server thread runs the sync ORM under its event loop, as the e2e tests' server does.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    server = LiveServer(lifespan="off")
    settings.EXOGRAPH_PUBLIC_URL = server.url
    server.start()
    try:
        yield server.url
    finally:
        server.stop()
        graph_stores_drop()
