"""Content-Security-Policy on every page (django-csp): scripts only from our origin or with the request's nonce."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

pytestmark = pytest.mark.django_db

ANONYMOUS_PAGES = ["/login/", "/signup/", "/admin/login/", "/no-such-page/", "/healthz"]
ACCOUNT_PAGES = [
    "home:dashboard",
    "accounts:api_keys",
    "accounts:password_change",
    "graphs:list",
    "graphs:search",
    "graphs:world",
    "documents:list",
    "chat:page",
    "billing:page",
]


def _policy(response) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    header = response.headers.get("Content-Security-Policy")
    assert header, f"no Content-Security-Policy on {response.wsgi_request.path}"
    directives: dict[str, list[str]] = {}
    for part in header.split(";"):
        name, *values = part.split()
        directives[name] = values
    return directives


def _assert_scripts_allowed(response) -> None:  # type: ignore[no-untyped-def]
    policy = _policy(response)
    assert "'unsafe-inline'" not in policy["script-src"] and "'unsafe-eval'" not in policy["script-src"]
    for tag in re.findall(r"<script\b[^>]*>", response.content.decode()):
        if "src=" in tag:
            continue
        nonce = re.search(r'nonce="([^"]+)"', tag)
        assert nonce, f"inline script without a nonce on {response.wsgi_request.path}: {tag}"
        assert f"'nonce-{nonce.group(1)}'" in policy["script-src"]


@pytest.mark.parametrize("path", ANONYMOUS_PAGES)
def test_every_anonymous_page_has_a_strict_policy(path):
    response = Client().get(path)
    policy = _policy(response)
    assert policy["default-src"] == ["'self'"]
    assert policy["object-src"] == ["'none'"] and policy["frame-ancestors"] == ["'none'"]
    _assert_scripts_allowed(response)


@pytest.mark.parametrize("name", ACCOUNT_PAGES)
def test_every_account_page_has_a_strict_policy(alice, name):
    client = Client()
    client.force_login(alice)
    response = client.get(reverse(name))
    assert response.status_code == 200
    _assert_scripts_allowed(response)
    assert not any("cdn.jsdelivr.net" in value for values in _policy(response).values() for value in values)


def test_documents_page_live_progress_script_is_a_static_file_not_inline_code(alice):
    client = Client()
    client.force_login(alice)
    response = client.get(reverse("documents:list"))
    scripts = re.findall(rb"<script([^>]*)>(.*?)</script>", response.content, flags=re.S)
    assert any(b"js/documents.js" in attrs for attrs, _ in scripts)
    # Any inline code must carry the page's nonce; the policy never allows unsafe-inline scripts.
    for attrs, body in scripts:
        if body.strip():
            nonce = re.search(rb'nonce="([^"]+)"', attrs)
            assert nonce is not None and f"'nonce-{nonce.group(1).decode()}'" in _policy(response)["script-src"]
    assert "'unsafe-inline'" not in _policy(response)["script-src"]


def test_api_responses_carry_the_policy_too(alice_client):
    assert "Content-Security-Policy" in alice_client.get("/api/v1/me/").headers


def test_swagger_ui_is_served_from_our_static_files_without_a_cdn():
    response = Client().get("/api/docs/")
    assert response.status_code == 200
    policy = _policy(response)
    assert not any("cdn.jsdelivr.net" in value for values in policy.values() for value in values)
    assert b"cdn.jsdelivr.net" not in response.content and b"/static/drf_spectacular_sidecar/" in response.content
    assert "'unsafe-inline'" not in policy["script-src"]
    _assert_scripts_allowed(response)  # its init script is served from our origin (?script)
    script = Client().get("/api/docs/?script")
    assert script.status_code == 200 and b"SwaggerUIBundle" in script.content
