"""Every REST write endpoint refuses a body field it does not take: a 400 unknown_field naming the nearest field it
does take, before anything is created, changed or charged (a misspelt field dropped silently runs with its default:
{"scop": "private"} made a graph of the default scope, {"dry_rn": true} on an import charged for it). JSON and
multipart bodies alike; a query string keeps its paging keys (limit, cursor) beside a view's own filters."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from billing.models import CheckoutSession, CreditEntry, Hold
from billing.services import credit_balance
from exograph.accounts.models import ApiKey
from exograph.chat.models import ChatMessage, ChatSession
from exograph.core.scope import Scope
from exograph.documents.models import Document
from exograph.graphs.models import Graph
from exograph.graphs.services import graph_create
from research.models import ResearchSession

pytestmark = pytest.mark.django_db

NOTE = "The Tidewell pumping station was rebuilt in 1962 by the Marsh Drainage Board."


@dataclass(frozen=True)
class Door:
    """One write endpoint and a body with one misspelt field; prepare makes what its URL names (returns the URL)."""

    route: str  # the URL name in the api namespace
    method: str
    prepare: Callable[[Any, Any], str]
    body: dict[str, Any]
    misspelt: str
    nearest: str
    fmt: str = "json"


def _graph(client: Any, alice: Any) -> str:
    graph = graph_create(actor=alice, name="Fen drainage", scope=Scope.PRIVATE)
    return str(graph.id)


def _key(client: Any, alice: Any) -> str:
    response = client.post("/api/v1/keys/", {"name": "tide-bot"}, format="json")
    assert response.status_code == 201, response.json()
    return f"/api/v1/keys/{response.json()['id']}/"


def _session(client: Any, alice: Any) -> str:
    response = client.post("/api/v1/chat/sessions/", {"title": "Pumping stations"}, format="json")
    assert response.status_code == 201, response.json()
    return f"/api/v1/chat/sessions/{response.json()['id']}/"


def _cancelled_document(client: Any, alice: Any) -> str:
    """A text note uploaded then cancelled (refunded): a retry would charge its upload price again."""
    uploaded = client.post("/api/v1/documents/", {"text": NOTE, "title": "Tidewell"}, format="json")
    assert uploaded.status_code == 201, uploaded.json()
    document_id = uploaded.json()["id"]
    assert client.post(f"/api/v1/documents/{document_id}/cancel/").status_code == 200
    return f"/api/v1/documents/{document_id}/retry/"


def _at(url: str) -> Callable[[Any, Any], str]:
    return lambda client, alice: url


DOORS = [
    Door("graphs", "post", _at("/api/v1/graphs/"), {"name": "Sluice gates", "scop": "world"}, "scop", "graph_scope"),
    Door(
        "graphs",
        "post",
        _at("/api/v1/graphs/"),
        {"name": "Sluice gates", "graph_scop": "world"},
        "graph_scop",
        "graph_scope",
        fmt="multipart",
    ),
    Door(
        "graph-detail",
        "patch",
        lambda client, alice: f"/api/v1/graphs/{_graph(client, alice)}/",
        {"nmae": "Fen drains"},
        "nmae",
        "name",
    ),
    Door(
        "graph-import",
        "post",
        lambda client, alice: f"/api/v1/graphs/{_graph(client, alice)}/import/",
        {
            "format": "jsonl",
            "content": '{"subject": "Tidewell", "predicate": "drains", "object": "Holm Fen"}\n',
            "dry_rn": True,
        },
        "dry_rn",
        "dry_run",
    ),
    Door("keys", "post", _at("/api/v1/keys/"), {"name": "reader", "readonly": True}, "readonly", "read_only"),
    Door("key-detail", "patch", _key, {"monthly_cap": 5}, "monthly_cap", "monthly_credit_cap"),
    Door("billing-checkout", "post", _at("/api/v1/billing/checkout/"), {"packs": "small"}, "packs", "pack"),
    Door(
        "retrieve",
        "post",
        _at("/api/v1/retrieve/"),
        {"question": "Who rebuilt the Tidewell station?", "top_n": 3},
        "top_n",
        "top_k",
    ),
    Door(
        "chat-sessions",
        "post",
        _at("/api/v1/chat/sessions/"),
        {"title": "Sluices", "engine": "rag"},
        "engine",
        "reasoning_engine",
    ),
    Door("chat-session-detail", "patch", _session, {"titel": "Sluices and pumps"}, "titel", "title"),
    Door(
        "chat-messages",
        "post",
        _at("/api/v1/chat/messages/"),
        {"message": "Who rebuilt the Tidewell station?", "modle": "ponder"},
        "modle",
        "model",
    ),
    Door(
        "documents",
        "post",
        _at("/api/v1/documents/"),
        {"text": NOTE, "title": "Tidewell", "scope": "world"},
        "scope",
        "graph_scope",
    ),
    Door("document-retry", "post", _cancelled_document, {"dry_rn": True}, "dry_rn", "dry_run"),
    Door(
        "research",
        "post",
        _at("/api/v1/research/"),
        {"query": "fen drainage boards", "budget": 40},
        "budget",
        "budget_credits",
    ),
]

# Write endpoints that take no body at all, and the webhook whose body is Stripe's signed event (not ours to shape).
NO_BODY = {"document-cancel", "research-cancel", "billing-stripe-webhook"}


def _state(alice: Any) -> dict[str, Any]:
    """Everything a write endpoint may create, change or charge."""
    return {
        "balance": credit_balance(account=alice),
        "entries": CreditEntry.objects.count(),
        "holds": Hold.objects.count(),
        "checkouts": CheckoutSession.objects.count(),
        "graphs": list(Graph.objects.order_by("id").values_list("id", "name", "scope")),
        "keys": list(ApiKey.objects.order_by("id").values_list("id", "name", "read_only", "monthly_credit_cap")),
        "sessions": list(ChatSession.objects.order_by("id").values_list("id", "title", "reasoning_engine")),
        "messages": ChatMessage.objects.count(),
        "documents": list(Document.objects.order_by("id").values_list("id", "status")),
        "research": ResearchSession.objects.count(),
    }


@pytest.mark.parametrize("door", DOORS, ids=[f"{door.route}-{door.method}-{door.fmt}" for door in DOORS])
def test_a_misspelt_field_is_a_400_naming_the_nearest_field_and_nothing_is_made_or_charged(
    door: Door, alice: Any, alice_client: Any, fund: Any
) -> None:
    fund(alice, 200)
    url = door.prepare(alice_client, alice)
    before = _state(alice)
    response = getattr(alice_client, door.method)(url, door.body, format=door.fmt)
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "unknown_field", error
    assert f"'{door.misspelt}'" in error["message"] and f"Did you mean '{door.nearest}'?" in error["hint"]
    assert _state(alice) == before


def _write_routes() -> set[str]:
    """The URL name of every api view that has a POST, PUT or PATCH."""
    names: set[str] = set()

    def walk(patterns: Any) -> None:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns)
            elif isinstance(pattern, URLPattern) and pattern.name:
                view = getattr(pattern.callback, "view_class", None)
                if view is not None and any(hasattr(view, method) for method in ("post", "put", "patch")):
                    names.add(pattern.name)

    api = next(p for p in get_resolver().url_patterns if isinstance(p, URLResolver) and p.namespace == "api")
    walk(api.url_patterns)
    return names


def test_every_write_endpoint_is_covered_by_the_misspelt_field_cases() -> None:
    """A new write endpoint joins DOORS (or NO_BODY, saying why), so no body field is ever dropped unseen."""
    assert _write_routes() - {"schema"} == {door.route for door in DOORS} | NO_BODY


def test_a_query_string_keeps_its_paging_keys(alice: Any, alice_client: Any) -> None:
    """Strict bodies leave query strings as they were: limit/offset/cursor are read by the paginator."""
    for name in ("Dykes", "Drains"):
        graph_create(actor=alice, name=name, scope=Scope.PRIVATE)
    page = alice_client.get("/api/v1/graphs/", {"limit": 1, "offset": 1})
    assert page.status_code == 200 and len(page.json()["results"]) == 1
    sessions = alice_client.get("/api/v1/chat/sessions/", {"limit": 1})
    assert sessions.status_code == 200
