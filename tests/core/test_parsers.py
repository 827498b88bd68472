"""Hostile JSON bodies: deep nesting answers 400 naming the limit on every JSON endpoint, never 500."""

from __future__ import annotations

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.views import APIView

pytestmark = pytest.mark.django_db

DEEP = "[" * 1000 + "]" * 1000
DEEPER = '{"a": ' * 5000 + "1" + "}" * 5000


def _api_views_with_bodies() -> list[tuple[str, str]]:
    """(path, method) for every /api/v1/ view that takes a request body, with '1' for each path argument."""
    found: list[tuple[str, str]] = []

    def walk(patterns: list, prefix: str) -> None:
        for pattern in patterns:
            route = str(pattern.pattern).lstrip("^").rstrip("$").replace("/?", "/")
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, prefix + route)
            elif isinstance(pattern, URLPattern):
                view_class = getattr(pattern.callback, "view_class", None)
                if view_class is None or not issubclass(view_class, APIView):
                    continue
                path = "/" + prefix + route
                for part in ("<str:", "<int:", "<path:"):
                    while part in path:
                        start = path.index(part)
                        path = path[:start] + "1" + path[path.index(">", start) + 1 :]
                for method in ("post", "put", "patch"):
                    if hasattr(view_class, method):
                        found.append((path, method))

    walk(get_resolver().url_patterns, "")
    # The Stripe webhook reads raw bytes and checks the signature before any parsing.
    return [item for item in found if item[0].startswith("/api/v1/") and "/webhooks/" not in item[0]]


BODY_ENDPOINTS = _api_views_with_bodies()


def test_the_endpoint_walk_finds_the_json_endpoints():
    paths = {path for path, _ in BODY_ENDPOINTS}
    assert {"/api/v1/keys/", "/api/v1/graphs/", "/api/v1/documents/", "/api/v1/billing/checkout/"} <= paths


@pytest.mark.parametrize("body", [DEEP, DEEPER], ids=["array-1000", "object-5000"])
@pytest.mark.parametrize(
    "path", ["/api/v1/keys/", "/api/v1/graphs/", "/api/v1/documents/", "/api/v1/billing/checkout/"]
)
def test_deeply_nested_json_is_400_naming_the_depth_limit(alice_client, path, body, settings):
    response = alice_client.post(path, data=body, content_type="application/json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "json_too_deep"
    assert f"deeper than {settings.JSON_MAX_DEPTH} levels" in error["message"]


@pytest.mark.parametrize(("path", "method"), BODY_ENDPOINTS)
def test_deeply_nested_json_never_gives_500_on_any_endpoint(alice_client, path, method):
    response = getattr(alice_client, method)(path, data=DEEP, content_type="application/json")
    assert response.status_code < 500, (path, method, response.content[:200])
    if response.status_code == 400 and "error" in response.json():
        assert response.json()["error"]["code"] == "json_too_deep"


def test_moderately_nested_json_past_the_setting_is_400(alice_client, settings):
    settings.JSON_MAX_DEPTH = 5
    body = '{"name": "k", "x": [[[[[1]]]]]}'
    response = alice_client.post("/api/v1/keys/", data=body, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "json_too_deep"
    # Within the limit the body is parsed and reaches the view, which names 'x' as a field keys do not take.
    ok = alice_client.post("/api/v1/keys/", data='{"name": "k", "x": [[1]]}', content_type="application/json")
    assert ok.status_code == 400 and ok.json()["error"]["code"] == "unknown_field"


def test_json_loads_bounded_refuses_deep_documents_for_plain_django_views():
    from exograph.core.parsers import JsonTooDeep, json_loads_bounded

    with pytest.raises(JsonTooDeep, match="deeper than 64 levels"):
        json_loads_bounded(DEEP)
    with pytest.raises(JsonTooDeep):
        json_loads_bounded(DEEPER)
    assert json_loads_bounded('{"a": [1, {"b": 2}]}') == {"a": [1, {"b": 2}]}
