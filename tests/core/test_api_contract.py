"""The shared REST contract: error envelope, scope header, schema, health."""

from __future__ import annotations

import subprocess
import sys

import pytest
from django.conf import settings
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db


def _assert_envelope(response, status, code=None):
    assert response.status_code == status
    error = response.json()["error"]
    assert set(error) >= {"code", "message", "hint"}
    assert error["message"]
    if code:
        assert error["code"] == code
    return error


@pytest.mark.parametrize("value", ["World", "private", " world "])
def test_scope_header_is_parsed_once(alice_client, value):
    response = alice_client.get("/api/v1/me/", HTTP_X_GRAPH_SCOPE=value)
    assert response.json()["graph_scope"] == value.strip().lower()


def test_graph_scope_argument_overrides_the_header(alice_client):
    response = alice_client.get("/api/v1/me/?graph_scope=world", HTTP_X_GRAPH_SCOPE="private")
    assert response.json()["graph_scope"] == "world"
    bad = alice_client.get("/api/v1/me/?graph_scope=everything")
    error = _assert_envelope(bad, 400, "invalid_scope")  # as the header (README)
    assert "'world' or 'private'" in error["message"]


def test_scope_defaults_to_private(alice_client):
    assert alice_client.get("/api/v1/me/").json()["graph_scope"] == "private"


@pytest.mark.parametrize("value", ["public", "wor ld", "' OR 1=1", "x" * 500])
def test_unknown_scope_is_400_naming_allowed_values(alice_client, value):
    error = _assert_envelope(alice_client.get("/api/v1/me/", HTTP_X_GRAPH_SCOPE=value), 400, "invalid_scope")
    assert "'world' or 'private'" in error["message"]


def test_malformed_json_is_400_with_hint(alice_client):
    response = alice_client.post("/api/v1/keys/", data="{not json", content_type="application/json")
    error = _assert_envelope(response, 400, "malformed_request")
    assert "JSON" in error["hint"]


def test_json_that_is_not_an_object_is_400(alice_client):
    response = alice_client.post("/api/v1/keys/", data="[1, 2]", content_type="application/json")
    _assert_envelope(response, 400, "invalid")


def test_unknown_api_path_is_json_404(alice_client):
    _assert_envelope(alice_client.get("/api/v1/no-such-thing/"), 404, "not_found")


def test_wrong_method_is_405_envelope(alice_client):
    _assert_envelope(alice_client.put("/api/v1/me/", {}, format="json"), 405, "method_not_allowed")


def test_unauthenticated_is_401_envelope():
    _assert_envelope(APIClient().get("/api/v1/keys/"), 401, "unauthenticated")


def test_openapi_schema_and_docs(alice_client):
    schema = alice_client.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert schema.status_code == 200
    body = schema.json() if schema["Content-Type"].endswith("json") else None
    if body is None:
        import yaml

        body = yaml.safe_load(schema.content)
    assert body["openapi"].startswith("3.")
    assert "/api/v1/keys/" in body["paths"]
    docs = APIClient().get("/api/docs/")
    assert docs.status_code == 200 and b"swagger" in docs.content.lower()


def test_healthz_and_readyz_ok(client):
    assert client.get("/healthz").json() == {"status": "ok"}
    ready = client.get("/readyz")
    assert ready.status_code == 200
    checks = {"sql": "ok", "redis": "ok", "falkordb": "ok", "ratelimit_redis": "ok", "embeddings": "ok"}
    assert ready.json()["checks"] == checks


def test_readyz_names_the_failed_dependency(client, settings, tmp_path):
    settings.FALKORDB_URL = f"unix://{tmp_path}/nothing-here.sock"
    response = client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["checks"]["falkordb"].startswith("unavailable")
    assert body["checks"]["sql"] == "ok"
    assert "FalkorDB graph store" in body["error"]["message"]


def test_check_deploy_is_clean_with_production_variables(tmp_path):
    env = {
        "PATH": "/usr/bin:/bin",
        "DATABASE_URL": "postgres://exo:exo@db.internal:5432/exograph",
        "REDIS_URL": "redis://redis.internal:6379/0",
        "FALKORDB_URL": "redis://falkordb.internal:6379",
        "DJANGO_SECRET_KEY": "k" * 20 + "Zq9!x@v#b$n%m^a&s*d(f)g_h+j" * 2,
        "DJANGO_ALLOWED_HOSTS": "exograph.example.com",
        "EXOGRAPH_VAR_DIR": str(tmp_path),
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr


def test_production_refuses_to_start_without_secret_key(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "DATABASE_URL": "postgres://x@y/z", "EXOGRAPH_VAR_DIR": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY" in result.stderr


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"\xff\xfe\x00garbage", "application/json"),
        (b"--x\r\nContent-Disposition: form-data", "multipart/form-data"),
        (b"--b\r\nbroken", "multipart/form-data; boundary=b"),
        (b"<xml/>", "application/xml"),
        (b"", "application/json"),
    ],
)
def test_hostile_bodies_never_500(alice_client, body, content_type):
    response = alice_client.generic("POST", "/api/v1/keys/", body, content_type=content_type)
    assert 400 <= response.status_code < 500, response.content
    assert response.json()["error"]["code"]
