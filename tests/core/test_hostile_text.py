"""Hostile text in every field of every endpoint: lone UTF-16 surrogates and NULs answer 400 naming the field,
RTL overrides and zero-width characters are accepted or refused with a 4xx; nothing is ever a 5xx.

The fields come from the served OpenAPI schema (/api/v1/schema/): each request-body property of each operation,
one at a time, and every query parameter. A lone surrogate reaches a JSON body as the escape "\\ud800"; in a URL
or form it cannot (percent-decoding replaces invalid UTF-8), so there the raw bytes of one are sent instead.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

SURROGATE = "\ud800"
NUL = "a\x00b"
REFUSED = {"lone-surrogate": SURROGATE, "nul": NUL}
ACCEPTED_OR_4XX = {"rtl-override": "abc\u202edef", "zero-width": "\u200b", "zero-width-inside": "wor\u200bld"}
METHODS = ("get", "post", "put", "patch", "delete")


@pytest.fixture
def schema(alice_client: APIClient) -> dict[str, Any]:
    response = alice_client.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    return json.loads(response.content)


@pytest.fixture
def client(alice_client: APIClient, settings: Any) -> APIClient:
    # Hundreds of calls from one account: lift its per-minute limit (the limiter still runs).
    settings.BILLING_PLANS = {name: {"per_minute": 100_000, "per_day": 1_000_000} for name in settings.BILLING_PLANS}
    settings.USE_STRIPE = False
    return alice_client


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def _body_fields(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every property of a request body schema (through $ref, allOf, oneOf, anyOf), by name."""
    node = _resolve(schema, node)
    fields: dict[str, dict[str, Any]] = {}
    for part in node.get("allOf", []) + node.get("oneOf", []) + node.get("anyOf", []):
        fields.update(_body_fields(schema, part))
    for name, prop in node.get("properties", {}).items():
        prop = _resolve(schema, prop)
        if not prop.get("readOnly"):
            fields[name] = prop
    return fields


def _path(template: str, parameters: list[dict[str, Any]]) -> str:
    for parameter in parameters:
        if parameter["in"] == "path":
            kind = parameter.get("schema", {})
            value = str(uuid.uuid4()) if kind.get("format") == "uuid" or "uuid" in parameter["name"] else "1"
            template = template.replace("{" + parameter["name"] + "}", value)
    return template


def _operations(schema: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    found = []
    for template, item in schema["paths"].items():
        for method, operation in item.items():
            if method in METHODS:
                found.append((method, template, operation))
    return found


def _body_cases(schema: dict[str, Any]) -> list[tuple[str, str, str, bool]]:
    """(method, path template, field, is_array) for every JSON body property of every operation."""
    cases = []
    for method, template, operation in _operations(schema):
        content = operation.get("requestBody", {}).get("content", {})
        if "application/json" in content:
            for name, prop in _body_fields(schema, content["application/json"]["schema"]).items():
                cases.append((method, template, name, prop.get("type") == "array"))
    return cases


def _query_cases(schema: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [
        (method, template, parameter["name"])
        for method, template, operation in _operations(schema)
        for parameter in operation.get("parameters", [])
        if parameter["in"] == "query"
    ]


def _send_json(client: APIClient, schema: dict[str, Any], method: str, template: str, body: dict[str, Any]) -> Any:
    operation = schema["paths"][template][method]
    path = _path(template, operation.get("parameters", []))
    # ensure_ascii (json.dumps' default) writes a lone surrogate as the escape "\ud800", as a hostile client would.
    return getattr(client, method)(path, data=json.dumps(body), content_type="application/json")


def test_the_schema_walk_finds_the_fields_the_probe_used(schema):
    body = {(method, template, name) for method, template, name, _ in _body_cases(schema)}
    assert ("post", "/api/v1/chat/messages/", "graph_scope") in body
    assert ("post", "/api/v1/documents/", "text_format") in body
    assert ("post", "/api/v1/research/", "watch") in body
    assert len(body) >= 30
    assert ("get", "/api/v1/entities/search", "query") in set(_query_cases(schema))


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/api/v1/chat/messages/", '{"message": "hi", "graph_scope": "\\ud800"}', "graph_scope"),
        ("/api/v1/documents/", '{"text": "hi", "text_format": "\\udfff"}', "text_format"),
        ("/api/v1/research/", '{"query": "q", "watch": "\\ud800x"}', "watch"),
        ("/api/v1/graphs/", '{"name": "a\\u0000b"}', "name"),
        ("/api/v1/research/", '{"query": "q", "sources": ["ok", "\\ud800"]}', "sources[1]"),
    ],
)
def test_the_probes_raw_escapes_answer_400_naming_the_field(client, path, body, field):
    response = client.post(path, data=body, content_type="application/json")
    assert response.status_code == 400, response.content[:300]
    error = response.json()["error"]
    assert set(error) >= {"code", "message", "hint"}
    assert error["code"] == "invalid_text"
    assert error["field"] == field
    assert error["message"].startswith(f"{field} contains ")


def test_every_json_body_field_refuses_surrogates_and_nuls_and_never_fails_on_rtl_or_zero_width(client, schema):
    failures = []
    for method, template, field, is_array in _body_cases(schema):
        for label, value in {**REFUSED, **ACCEPTED_OR_4XX}.items():
            response = _send_json(client, schema, method, template, {field: [value] if is_array else value})
            seen = f"{method.upper()} {template} {field}={label}: {response.status_code} {response.content[:200]!r}"
            if label in REFUSED:
                if response.status_code != 400 or response.json()["error"].get("field", "").split("[")[0] != field:
                    failures.append(seen)
            elif response.status_code >= 500:
                failures.append(seen)
    assert not failures, "\n".join(failures)


def test_every_query_parameter_refuses_nuls_and_never_fails_on_other_hostile_text(client, schema):
    failures = []
    for method, template, name in _query_cases(schema):
        path = _path(template, schema["paths"][template][method].get("parameters", []))
        # %ED%A0%80 is a surrogate's UTF-8-shaped bytes: no valid URL can carry a lone surrogate.
        for label, encoded in {
            "nul": "a%00b",
            "surrogate-bytes": "%ED%A0%80",
            "rtl": "abc%E2%80%AEdef",
            "zw": "%E2%80%8B",
        }.items():
            response = getattr(client, method)(f"{path}?{name}={encoded}")
            seen = f"{method.upper()} {template} ?{name}={label}: {response.status_code} {response.content[:200]!r}"
            if label == "nul":
                if response.status_code != 400 or response.json()["error"].get("field") != name:
                    failures.append(seen)
            elif response.status_code >= 500:
                failures.append(seen)
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("content_type", ["multipart", "urlencoded"])
def test_form_fields_refuse_nuls_naming_the_field(client, content_type):
    if content_type == "multipart":
        response = client.post("/api/v1/graphs/", {"name": NUL, "graph_scope": "private"}, format="multipart")
    else:
        response = client.post(
            "/api/v1/graphs/", data="graph_scope=private&name=a%00b", content_type="application/x-www-form-urlencoded"
        )
    assert response.status_code == 400
    assert response.json()["error"] == {**response.json()["error"], "code": "invalid_text", "field": "name"}


@pytest.mark.parametrize("value", [SURROGATE, NUL])
def test_the_scope_header_refuses_surrogates_and_nuls(client, value):
    response = client.get("/api/v1/graphs/", HTTP_X_GRAPH_SCOPE=value)
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "header X-Graph-Scope"


def test_an_error_that_echoes_bad_input_still_renders():
    from exograph.core.api import renderable

    body = {"error": {"message": f'got "{SURROGATE}{NUL}"', "fields": {"x\x00": [SURROGATE]}}}
    rendered = renderable(body)
    json.dumps(rendered, ensure_ascii=False).encode()  # UTF-8 encodable: no UnicodeEncodeError
    assert rendered["error"]["message"] == 'got "\\ud800a\\u0000b"'
    assert rendered["error"]["fields"] == {"x\\u0000": ["\\ud800"]}
