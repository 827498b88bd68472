"""The OpenAPI schema says what the API does (issue 8, item 21): shapes checked on the served schema."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from billing.services import credits_grant_admin
from tests.documents.conftest import fixture_bytes

pytestmark = pytest.mark.django_db

SMALL_PDF = "pdf/sf_pdflatex-4-pages.pdf"  # 4 pages: 9 credits


@pytest.fixture
def schema(alice_client) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    response = alice_client.get("/api/v1/schema/?format=json")
    assert response.status_code == 200
    return response.json()


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node or "allOf" in node:
        node = node["allOf"][0] if "allOf" in node else node
        if "$ref" in node:
            node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def _body(schema: dict[str, Any], path: str, method: str, status: str) -> dict[str, Any]:
    response = schema["paths"][path][method]["responses"][status]
    return _resolve(schema, response["content"]["application/json"]["schema"])


@pytest.mark.parametrize(
    ("path", "item"),
    [
        ("/api/v1/graphs/", "GraphOut"),
        ("/api/v1/documents/", "DocumentListItemOut"),
        ("/api/v1/billing/ledger/", "CreditEntryOut"),
    ],
)
def test_paged_list_endpoints_are_documented_as_the_paginated_object(schema, path, item):
    body = _body(schema, path, "get", "200")
    assert body["type"] == "object"
    assert set(body["properties"]) == {"count", "next", "previous", "results"}
    assert body["properties"]["results"]["items"]["$ref"].endswith(f"/{item}")
    names = {p["name"] for p in schema["paths"][path]["get"]["parameters"]}
    assert {"limit", "offset"} <= names


@pytest.mark.parametrize("path", ["/api/v1/keys/", "/api/v1/billing/packs/"])
def test_unpaged_lists_are_documented_as_a_results_object(schema, path):
    body = _body(schema, path, "get", "200")
    assert body["type"] == "object" and body["properties"]["results"]["type"] == "array"


def test_every_operation_documents_the_error_envelope_for_400_401_429_503_and_415_with_a_body(schema):
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            for status in ("400", "401", "429", "503", *(["415"] if method in ("post", "patch") else [])):
                assert status in operation["responses"], (method, path, status)
                body = _body(schema, path, method, status)
                assert body["required"] == ["error"], (method, path, status)
                error = _resolve(schema, body["properties"]["error"])
                assert {"code", "message", "hint"} <= set(error["required"])


@pytest.mark.parametrize(
    ("path", "method", "statuses"),
    [
        ("/api/v1/documents/", "post", {"402", "403", "404", "409", "413", "415"}),
        ("/api/v1/documents/{document_id}/retry/", "post", {"402", "404", "409"}),
        ("/api/v1/documents/{document_id}/", "get", {"404"}),
        ("/api/v1/graphs/{graph_id}/", "patch", {"403", "404", "409"}),
        ("/api/v1/graphs/", "post", {"409"}),
        ("/api/v1/billing/holds/{hold_id}/", "get", {"404"}),
        ("/api/v1/billing/checkout/", "post", {"503"}),
        ("/api/v1/keys/{key_id}/", "delete", {"404"}),
    ],
)
def test_operations_document_the_errors_they_answer(schema, path, method, statuses):
    assert statuses <= set(schema["paths"][path][method]["responses"])


def test_upload_documents_each_mode_with_its_required_fields(schema):
    content = schema["paths"]["/api/v1/documents/"]["post"]["requestBody"]["content"]
    multipart = _resolve(schema, content["multipart/form-data"]["schema"])
    assert multipart["required"] == ["file"]
    assert multipart["properties"]["file"]["format"] == "binary"
    modes = [_resolve(schema, s) for s in _resolve(schema, content["application/json"]["schema"])["oneOf"]]
    assert sorted(sorted(mode["required"]) for mode in modes) == [["file_content_base64", "filename"], ["file_path"]]


def test_graph_rename_documents_name_as_required(schema):
    content = schema["paths"]["/api/v1/graphs/{graph_id}/"]["patch"]["requestBody"]
    assert content["required"] is True
    assert _resolve(schema, content["content"]["application/json"]["schema"])["required"] == ["name"]


def test_upload_dry_run_as_a_json_boolean_quotes(alice, alice_client):
    credits_grant_admin(account=alice, amount=50, actor=None, note="test")
    body = {
        "file_content_base64": base64.b64encode(fixture_bytes(SMALL_PDF)).decode(),
        "filename": "small.pdf",
        "dry_run": True,
    }
    response = alice_client.post("/api/v1/documents/", body, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["dry_run"] is True and response.json()["credits_needed"] == 9
