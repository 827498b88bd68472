"""FalkorDB down or hung during a search: a 503 naming the graph store, without hanging; then recovery in-process.

Each test stops its own throwaway FalkorDB (never the session's shared one).
"""

from __future__ import annotations

import signal
import threading
from typing import Any

import pytest
from django.db import connections

from exograph.core.embedded import EmbeddedFalkorDB
from exograph.core.scope import Scope
from exograph.graphs.services import graph_create
from tests.graphs.conftest import QUANTUM_ENTITIES, QUANTUM_RELATIONS, QUANTUM_TEXTS

# transaction=True: the search runs in a thread (its own database connection) and must see the committed rows.
pytestmark = [pytest.mark.faults, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def own_graph_store(settings, throwaway_store: EmbeddedFalkorDB) -> EmbeddedFalkorDB:
    """This test's graph store is the throwaway server (cache, limits and broker stay on the session's)."""
    settings.FALKORDB_URL = throwaway_store.url
    settings.FALKORDB_SOCKET_TIMEOUT = 3.0
    return throwaway_store


def _search(client) -> Any:  # type: ignore[no-untyped-def]
    """GET the entity search in a thread; fail (not hang) if it has not answered within 60 s."""
    box: dict[str, Any] = {}

    def search() -> None:
        try:
            box["response"] = client.get("/api/v1/entities/search", {"query": "qubit"})
        finally:
            connections.close_all()  # this thread's own database connection

    thread = threading.Thread(target=search, daemon=True)
    thread.start()
    thread.join(timeout=60)
    assert not thread.is_alive(), "the search hung with the graph store down"
    return box["response"]


def test_search_with_the_graph_store_down_is_503_naming_it_and_recovers(
    alice,
    alice_client,
    write_doc,
    own_graph_store,
):
    graph = graph_create(actor=alice, name="Q", scope=Scope.PRIVATE)
    write_doc(graph, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES, relations=QUANTUM_RELATIONS)
    assert _search(alice_client).status_code == 200
    assert own_graph_store.process is not None
    own_graph_store.process.send_signal(signal.SIGKILL)
    own_graph_store.process.wait(timeout=10)

    down = _search(alice_client)

    assert down.status_code == 503, down.content
    error = down.json()["error"]
    assert error["code"] == "graph_store_unavailable" and "FalkorDB" in error["message"]
    own_graph_store.start()  # same data directory (AOF): the graph is back
    again = _search(alice_client)
    assert again.status_code == 200 and again.json()["results"][0]["name"] == "Qubit"


def test_search_with_the_graph_store_hung_is_503_naming_it_and_recovers(
    alice,
    alice_client,
    write_doc,
    own_graph_store,
):
    graph = graph_create(actor=alice, name="Q", scope=Scope.PRIVATE)
    write_doc(graph, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES, relations=QUANTUM_RELATIONS)
    assert _search(alice_client).status_code == 200
    assert own_graph_store.process is not None
    own_graph_store.process.send_signal(signal.SIGSTOP)  # alive, accepting connections, answering nothing
    try:
        hung = _search(alice_client)
    finally:
        own_graph_store.process.send_signal(signal.SIGCONT)

    assert hung.status_code == 503, hung.content
    error = hung.json()["error"]
    assert error["code"] in {"graph_store_timeout", "graph_store_unavailable"} and "FalkorDB" in error["message"]
    again = _search(alice_client)
    assert again.status_code == 200 and again.json()["results"][0]["name"] == "Qubit"
