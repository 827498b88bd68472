"""One scope rule on every door (exograph.core.scope.scope_resolve; README "Using the API"): the graph_scope
argument, else the X-Graph-Scope header, else private, for lists and writes alike (issue 24). Chat sessions used to
ignore the header in their list (all scopes) and research listed all scopes when no header was sent."""

from __future__ import annotations

import pytest

from billing.services import credits_grant_admin

pytestmark = pytest.mark.django_db

# door: (list and create URL, a create body without graph_scope)
DOORS = {
    "documents": ("/api/v1/documents/", {"text": "Surface codes protect logical qubits from noise.", "title": "Q"}),
    "graphs": ("/api/v1/graphs/", {"name": "Notes"}),
    "chat sessions": ("/api/v1/chat/sessions/", {"title": "Qubits"}),
    "research": ("/api/v1/research/", {"query": "surface codes"}),
}


def _ids(response) -> set[str]:  # type: ignore[no-untyped-def]
    assert response.status_code == 200, response.content
    return {str(item["id"]) for item in response.json()["results"]}


@pytest.mark.parametrize("door", list(DOORS))
def test_every_door_resolves_the_scope_the_same_way_for_writes_and_lists(door, alice, alice_client) -> None:  # type: ignore[no-untyped-def]
    credits_grant_admin(account=alice, amount=500, actor=None, note="test funding")
    url, body = DOORS[door]

    def create(name: str, **headers: str) -> str:
        response = alice_client.post(
            url, {**body, **({"name": name} if "name" in body else {})}, format="json", **headers
        )
        assert response.status_code in (200, 201, 202), response.content
        return str(response.json()["id"])

    # Writes: nothing sent -> private; the header -> its scope; the argument overrides the header.
    private = create("Private notes")
    world = create("World notes", HTTP_X_GRAPH_SCOPE="world")
    overridden = alice_client.post(
        url,
        {**body, "graph_scope": "private", **{key: "Overridden" for key in ("name", "title") if key in body}},
        format="json",
        HTTP_X_GRAPH_SCOPE="world",
    )
    assert overridden.status_code in (200, 201, 202), overridden.content
    private_ids = {private, str(overridden.json()["id"])} - {world}

    # Lists: the same rule.
    assert _ids(alice_client.get(url)) >= private_ids and world not in _ids(alice_client.get(url))
    by_header = _ids(alice_client.get(url, HTTP_X_GRAPH_SCOPE="world"))
    assert world in by_header and not by_header & private_ids
    by_argument = _ids(alice_client.get(url, {"graph_scope": "private"}, HTTP_X_GRAPH_SCOPE="world"))
    assert by_argument >= private_ids and world not in by_argument
    assert _ids(alice_client.get(url, {"graph_scope": "world"})) & {world, *private_ids} == {world}
    bad = alice_client.get(url, HTTP_X_GRAPH_SCOPE="public")
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_scope"


def test_scope_resolve_reads_argument_then_header_then_private(rf) -> None:  # type: ignore[no-untyped-def]
    from exograph.core.errors import ValidationError
    from exograph.core.scope import Scope, scope_resolve

    assert scope_resolve(rf.get("/")) == Scope.PRIVATE
    assert scope_resolve(rf.get("/", HTTP_X_GRAPH_SCOPE="World")) == Scope.WORLD
    assert scope_resolve(rf.get("/", HTTP_X_GRAPH_SCOPE="world"), "private") == Scope.PRIVATE
    assert scope_resolve(rf.get("/"), " ") == Scope.PRIVATE
    with pytest.raises(ValidationError):
        scope_resolve(rf.get("/"), "public")


@pytest.mark.parametrize("door", [*DOORS, "chat message", "entity search"])
def test_a_bad_graph_scope_argument_is_invalid_scope_like_the_header_and_charges_nothing(
    door, alice, alice_client
) -> None:  # type: ignore[no-untyped-def]
    """README: any scope value but world/private is a 400 invalid_scope, the argument as the header; the argument was
    the generic 'invalid' (a field error), so a client checking the documented code missed it."""
    from billing.models import CreditEntry
    from billing.services import credit_balance

    credits_grant_admin(account=alice, amount=500, actor=None, note="test funding")
    doors = {**DOORS, "chat message": ("/api/v1/chat/messages/", {"message": "Who mapped the reef?"})}
    if door == "entity search":
        responses = [alice_client.get("/api/v1/entities/search", {"query": "reef", "graph_scope": "public"})]
    else:
        url, body = doors[door]
        responses = [
            alice_client.post(url, {**body, "graph_scope": "public"}, format="json"),
            alice_client.get(url if door != "chat message" else "/api/v1/chat/sessions/", {"graph_scope": "everyone"}),
        ]
    for response in responses:
        assert response.status_code == 400, response.content
        error = response.json()["error"]
        assert error["code"] == "invalid_scope", error
        assert "'world' or 'private'" in error["message"] and "graph_scope" in error["message"]
        assert "'world'" in error["hint"] and "'private'" in error["hint"]
    assert credit_balance(account=alice) == 500
    assert not CreditEntry.objects.filter(kind__in=["charge", "hold"]).exists()
