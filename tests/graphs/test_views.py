from __future__ import annotations

import pytest
from django.test import Client

from exograph.core.scope import Scope
from exograph.graphs.models import Graph
from exograph.graphs.services import graph_create
from tests.graphs.conftest import QUANTUM_ENTITIES, QUANTUM_RELATIONS, QUANTUM_TEXTS

pytestmark = pytest.mark.django_db


def logged_in(user) -> Client:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(user)
    return client


def test_graph_pages_need_login() -> None:
    for path in ("/graphs/", "/graphs/search/", "/graphs/world/"):
        assert Client().get(path).status_code == 302


def test_create_rename_delete_from_the_web(alice) -> None:  # type: ignore[no-untyped-def]
    client = logged_in(alice)
    assert client.post("/graphs/", {"name": "Papers", "scope": "private"}).status_code == 302
    graph = Graph.objects.get(owner=alice, name="Papers")
    page = client.get("/graphs/")
    assert "Papers" in page.content.decode() and graph.id in page.content.decode()
    assert client.post("/graphs/", {"name": "Papers", "scope": "private"}).status_code == 409
    client.post(f"/graphs/{graph.id}/rename/", {"name": "Renamed"})
    assert Graph.objects.get(id=graph.id).name == "Renamed"
    client.post(f"/graphs/{graph.id}/delete/")
    assert not Graph.objects.filter(id=graph.id).exists()


def test_charlie_cannot_touch_alices_graph_from_the_web(alice, charlie) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Secret", scope=Scope.PRIVATE)
    client = logged_in(charlie)
    assert "Secret" not in client.get("/graphs/").content.decode()
    assert client.post(f"/graphs/{graph.id}/rename/", {"name": "Mine"}).status_code == 404
    assert client.post(f"/graphs/{graph.id}/delete/").status_code == 404
    assert client.get("/graphs/search/", {"query": "x", "graph_id": graph.id}).status_code == 404
    assert Graph.objects.get(id=graph.id).name == "Secret"


def test_search_and_world_pages(alice, bob, write_doc) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="W", scope=Scope.WORLD)
    write_doc(graph, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES, relations=QUANTUM_RELATIONS)
    client = logged_in(bob)
    page = client.get("/graphs/search/", {"query": "qubit", "graph_scope": "world"})
    assert page.status_code == 200 and "Qubit" in page.content.decode()
    assert client.get("/graphs/search/", {"query": "x", "n_results": 0}).status_code == 400
    world = client.get("/graphs/world/Quantum computing/", {"evidence": "1"})
    assert world.status_code == 200 and "paper.pdf" in world.content.decode()
    missing = client.get("/graphs/world/quantum error/")
    assert missing.status_code == 404 and "Quantum error correction" in missing.content.decode()
    assert client.get("/graphs/world/", {"entity": "Qubit"}).status_code == 302


def test_merges_page_lists_the_forms_for_the_owner_only(alice, charlie, write_resolved) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Harbour", scope=Scope.PRIVATE)
    write_resolved(graph, alice, texts=["The Harbour Board sat; the Harbour Board's clerk wrote."],
                   names=[("the Harbour Board", "ORGANIZATION"), ("Harbour Board's", "ORGANIZATION")])  # fmt: skip
    write_resolved(graph, alice, texts=["The Lighthouse Trust and the harbour board."],
                   names=[("the harbour board", "ORGANIZATION"), ("Lighthouse Trust", "ORGANIZATION")])  # fmt: skip
    client = logged_in(alice)
    page = client.get(f"/graphs/{graph.id}/merges/")
    html = page.content.decode()
    assert page.status_code == 200
    assert "Harbour Board&#x27;s" in html and "the Harbour Board" in html and "the harbour board" in html
    assert 'id="merged"' in html and "organization" in html
    assert "<script" not in html.split("<main", 1)[-1] and " style=" not in html  # CSP: no inline script or style
    # Reachable from the explorer and the graph list (the owner's actions).
    assert f'href="/graphs/{graph.id}/merges/"' in client.get(f"/graphs/{graph.id}/explore/").content.decode()
    assert f'href="/graphs/{graph.id}/merges/"' in client.get("/graphs/").content.decode()
    assert client.get(f"/graphs/{graph.id}/merges/", {"page": "0"}).status_code == 400
    assert client.get(f"/graphs/{graph.id}/merges/", {"page": "two"}).status_code == 400
    empty = client.get(f"/graphs/{graph.id}/merges/", {"page": "2"})
    assert empty.status_code == 200 and "Nothing merged on this page" in empty.content.decode()
    other = logged_in(charlie)
    mine = graph_create(actor=charlie, name="Charlie's", scope=Scope.PRIVATE)
    assert other.get(f"/graphs/{mine.id}/merges/").status_code == 200
    foreign = other.get(f"/graphs/{graph.id}/merges/")
    assert foreign.status_code == 404 and "Harbour" not in foreign.content.decode()
    assert f"/graphs/{graph.id}/merges/" not in other.get("/graphs/world/explore/").content.decode()
    assert other.get("/graphs/world/merges/").status_code == 403


def test_an_empty_world_graph_in_the_explorer_points_to_the_graphs_that_hold_your_documents(alice) -> None:  # type: ignore[no-untyped-def]
    # A newcomer's uploads land in a private graph; the explorer opens the World Graph, which holds nothing yet.
    kept = graph_create(actor=alice, name="Parish records", scope=Scope.PRIVATE)
    Graph.objects.filter(pk=kept.pk).update(entity_count=12)
    graph_create(actor=alice, name="Still empty", scope=Scope.PRIVATE)
    html = logged_in(alice).get("/graphs/explore/").content.decode()
    assert 'id="explore-elsewhere"' in html
    note = html.split('id="explore-elsewhere"', 1)[1].split("</p>", 1)[0]
    assert f'href="/graphs/{kept.id}/explore/"' in note and "12 entities" in note and "Still empty" not in note
    # A graph that holds entities needs no pointer elsewhere.
    assert 'id="explore-elsewhere"' not in logged_in(alice).get(f"/graphs/{kept.id}/explore/").content.decode()
