"""The Python client (clients/python, package exograph_client) against the real service: uvicorn serving
exograph.asgi on a free loopback port in a thread, on the test database (SQLite by default), eager Celery."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from billing.services import credits_grant_admin
from exograph.accounts.models import User
from exograph.graphs import store
from exograph.graphs.models import Graph
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
        for graph_id in Graph.objects.values_list("id", flat=True):
            store.store_drop(f"exo:{graph_id}")


@pytest.fixture
def fund() -> Callable[[User, int], None]:
    def give(user: User, amount: int) -> None:
        credits_grant_admin(account=user, amount=amount, actor=None, note="client tests")

    return give
