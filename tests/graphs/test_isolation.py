"""Isolation with data on both sides: alice and charlie each own a private graph named the same, with
near-identical content, plus world-scope knowledge; nothing private of one ever reaches the other."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from exograph.accounts.models import User
from exograph.core.errors import NotFound
from exograph.core.scope import Scope
from exograph.graphs.models import Graph
from exograph.graphs.selectors import graph_get_for_user, graph_list_for_user, world_entity_read
from exograph.graphs.services import graph_create
from tests.factories import search_entities

pytestmark = pytest.mark.django_db


PUBLIC_TEXTS = ["Quantum computing uses qubits.", "A qubit holds quantum information."]
PUBLIC_ENTITIES = [("Quantum computing", "concept", "Computation with qubits."), ("Qubit", "concept", "")]


def private_content(marker: str) -> dict[str, list]:  # type: ignore[type-arg]
    """The same quantum knowledge as the public one, with the owner's marker in every text."""
    return {
        "texts": [
            f"Quantum computing in the {marker} lab uses qubits cooled by {marker} fridges.",
            f"The {marker} qubit holds quantum information for {marker} experiments.",
        ],
        "entities": [
            ("Quantum computing", "concept", f"Computation with qubits, as the {marker} lab runs it."),
            ("Qubit", "concept", f"The {marker} unit of quantum information."),
            (f"{marker.title()} fridge", "device", f"The {marker} dilution refrigerator."),
        ],
        "relations": [("Quantum computing", "uses", "Qubit"), ("Qubit", "cooled by", f"{marker.title()} fridge")],
    }


@pytest.fixture
def two_owners(alice, bob, charlie, write_doc) -> dict[str, Graph]:  # type: ignore[no-untyped-def]
    world_b = graph_create(actor=bob, name="Public", scope=Scope.WORLD)
    write_doc(
        world_b, bob, texts=PUBLIC_TEXTS, entities=PUBLIC_ENTITIES, relations=[("Quantum computing", "uses", "Qubit")]
    )
    graphs = {}
    for user, marker in ((alice, "alicemark"), (charlie, "charliemark")):
        private = graph_create(actor=user, name="Secret lab", scope=Scope.PRIVATE)
        write_doc(private, user, filename=f"{marker}.pdf", **private_content(marker))
        graphs[marker] = private
    return graphs


def others_marker(user: User, alice: User) -> tuple[str, str]:
    """(the user's own marker, the other owner's marker)."""
    return ("alicemark", "charliemark") if user == alice else ("charliemark", "alicemark")


def test_private_search_finds_only_the_owners_knowledge(alice, charlie, two_owners) -> None:  # type: ignore[no-untyped-def]
    for user in (alice, charlie):
        own, foreign = others_marker(user, alice)
        hits = search_entities(user=user, query="quantum computing qubit fridge lab", scope=Scope.PRIVATE)
        assert hits, "each owner must find their own private knowledge"
        assert {h["graph_id"] for h in hits} == {two_owners[own].id}
        text = json.dumps(hits).casefold()
        assert own in text and foreign not in text
        with pytest.raises(NotFound):
            search_entities(user=user, query="qubit", graph_id=two_owners[foreign].id, scope=Scope.PRIVATE)


def test_world_search_and_world_graph_show_no_private_knowledge(alice, charlie, charlie_client, two_owners) -> None:  # type: ignore[no-untyped-def]
    for user in (alice, charlie):
        hits = search_entities(user=user, query="quantum computing qubit fridge lab", scope=Scope.WORLD)
        assert hits and {h["graph_id"] for h in hits} == {"world"}
        text = json.dumps(hits).casefold()
        assert "alicemark" not in text and "charliemark" not in text
        view = world_entity_read(user=user, entity="quantum computing", evidence=True)["view"]
        assert view["related"] and "mark" not in json.dumps(view).casefold()
    for name in ("Alicemark fridge", "Charliemark fridge"):
        assert charlie_client.get(f"/api/v1/world/entities/{name}/").status_code == 404
    rest = charlie_client.get("/api/v1/world/entities/qubit/", {"evidence": "true"})
    assert rest.status_code == 200 and "mark" not in rest.content.decode().casefold()


def test_graph_list_and_get_show_only_the_owners_graphs(  # type: ignore[no-untyped-def]
    alice, charlie, api_client_for: Callable[[User], object], two_owners
) -> None:
    for user in (alice, charlie):
        own, foreign = others_marker(user, alice)
        listed = {g.id for g in graph_list_for_user(user=user, scope=None)}
        assert two_owners[own].id in listed and two_owners[foreign].id not in listed
        assert graph_get_for_user(user=user, graph_id=two_owners[own].id).id == two_owners[own].id
        with pytest.raises(NotFound):
            graph_get_for_user(user=user, graph_id=two_owners[foreign].id)
        client = api_client_for(user)
        page = client.get("/api/v1/graphs/").json()  # type: ignore[attr-defined]
        ids = {g["id"] for g in page["results"]}
        assert two_owners[own].id in ids and two_owners[foreign].id not in ids
        assert client.get(f"/api/v1/graphs/{two_owners[own].id}/").status_code == 200  # type: ignore[attr-defined]
        assert client.get(f"/api/v1/graphs/{two_owners[foreign].id}/").status_code == 404  # type: ignore[attr-defined]
        search = client.get("/api/v1/entities/search", {"query": "fridge", "graph_scope": "private"}).json()  # type: ignore[attr-defined]
        assert search["results"] and foreign not in json.dumps(search["results"]).casefold()
