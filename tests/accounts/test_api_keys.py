from __future__ import annotations

import pickle
import pickletools

import pytest
import redis
from django.conf import settings
from django.core.cache import cache
from django.core.management import call_command
from rest_framework.test import APIClient

from exograph.accounts.models import ApiKey, User
from exograph.accounts.services import api_key_create, api_key_revoke
from exograph.core.errors import NotFound

pytestmark = pytest.mark.django_db


def test_key_is_shown_once_and_stored_hashed(alice):
    issued = api_key_create(actor=alice, name="laptop")
    assert issued.secret.startswith("exo_")
    stored = ApiKey.objects.get(id=issued.key.id)
    assert issued.secret not in (stored.digest, stored.prefix)
    assert len(stored.digest) == 64
    assert stored.display_prefix.startswith("exo_") and stored.display_prefix.endswith("…")


@pytest.mark.parametrize("header", ["HTTP_AUTHORIZATION", "HTTP_X_API_KEY"])
def test_bearer_and_x_api_key_reach_the_same_account(alice, alice_key, header):
    client = APIClient()
    value = f"Bearer {alice_key}" if header == "HTTP_AUTHORIZATION" else alice_key
    response = client.get("/api/v1/me/", **{header: value})
    assert response.status_code == 200
    assert response.json()["email"] == alice.email


def test_session_and_key_are_the_same_account(client, alice, alice_key):
    assert client.login(email=alice.email, password="correct-horse-battery-staple")
    assert client.get("/api/v1/me/").json()["id"] == alice.id
    assert APIClient().get("/api/v1/me/", HTTP_X_API_KEY=alice_key).json()["id"] == alice.id


@pytest.mark.parametrize(
    ("headers", "code"),
    [
        ({}, "unauthenticated"),
        ({"HTTP_AUTHORIZATION": "Basic dXNlcjpwYXNz"}, "invalid_auth_scheme"),
        ({"HTTP_AUTHORIZATION": "Token exo_abc"}, "invalid_auth_scheme"),
        ({"HTTP_AUTHORIZATION": "Bearer "}, "invalid_api_key"),
        ({"HTTP_AUTHORIZATION": "Bearer sk_live_123"}, "invalid_api_key"),
        ({"HTTP_AUTHORIZATION": "Bearer exo_short"}, "invalid_api_key"),
        ({"HTTP_X_API_KEY": "exo_0123456789ab_" + "x" * 43}, "invalid_api_key"),
        ({"HTTP_X_API_KEY": "exo_" + "é" * 300}, "invalid_api_key"),
    ],
)
def test_bad_credentials_get_401_envelope_with_hint(headers, code):
    response = APIClient().get("/api/v1/me/", **headers)
    assert response.status_code == 401
    error = response.json()["error"]
    assert error["code"] == code
    assert error["message"]
    assert "exo_" in error["hint"] or "key" in error["hint"].lower()


@pytest.mark.parametrize("value", ["{key}", "bearer:{key}", "ApiKey={key}"])
def test_a_key_sent_without_its_scheme_is_never_echoed_and_the_fix_is_named(alice_key, value):
    # A newcomer's make run probe: 'Authorization: exo_…' (no "Bearer ") answered "Unsupported authorization
    # scheme 'exo_23581a8d39b3_EYa'": the key's prefix and three secret characters, and no word of what to add.
    response = APIClient().get("/api/v1/me/", HTTP_AUTHORIZATION=value.format(key=alice_key))
    assert response.status_code == 401
    error = response.json()["error"]
    assert error["code"] == "invalid_auth_scheme"
    assert alice_key[:8] not in response.content.decode()
    assert "Bearer exo_" in error["hint"]


def test_a_key_alone_in_authorization_is_told_to_put_bearer_first(alice_key):
    error = APIClient().get("/api/v1/me/", HTTP_AUTHORIZATION=alice_key).json()["error"]
    assert "without its scheme" in error["message"]
    assert error["hint"].startswith("Put 'Bearer ' before the key")


def test_revoked_key_is_refused(alice):
    issued = api_key_create(actor=alice, name="old")
    api_key_revoke(actor=alice, key_id=issued.key.id)
    response = APIClient().get("/api/v1/me/", HTTP_AUTHORIZATION=f"Bearer {issued.secret}")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "revoked_api_key"


def test_tampered_secret_with_valid_prefix_is_refused(alice):
    issued = api_key_create(actor=alice, name="k")
    tampered = issued.secret[:-1] + ("A" if issued.secret[-1] != "A" else "B")
    response = APIClient().get("/api/v1/me/", HTTP_X_API_KEY=tampered)
    assert response.status_code == 401


def test_rest_create_list_revoke(alice_client):
    created = alice_client.post("/api/v1/keys/", {"name": "ci"}, format="json")
    assert created.status_code == 201
    body = created.json()
    assert body["key"].startswith("exo_") and body["name"] == "ci"
    listed = alice_client.get("/api/v1/keys/").json()["results"]
    assert body["id"] in [k["id"] for k in listed]
    assert all("key" not in k and "digest" not in k for k in listed)
    assert alice_client.delete(f"/api/v1/keys/{body['id']}/").status_code == 204
    assert APIClient().get("/api/v1/me/", HTTP_X_API_KEY=body["key"]).status_code == 401


def test_charlie_cannot_revoke_alices_key(alice, charlie_client):
    issued = api_key_create(actor=alice, name="mine")
    response = charlie_client.delete(f"/api/v1/keys/{issued.key.id}/")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    with pytest.raises(NotFound):
        api_key_revoke(actor=User.objects.get(email="charlie@example.com"), key_id=issued.key.id)
    assert ApiKey.objects.get(id=issued.key.id).revoked_at is None


def test_create_key_requires_a_name(alice_client):
    response = alice_client.post("/api/v1/keys/", {"name": ""}, format="json")
    assert response.status_code == 400
    assert "name" in response.json()["error"]["message"]


def test_create_account_command_creates_then_reuses(capsys):
    call_command("create_account", "--email", "Ops@Example.com", "--password", "a-long-enough-pass", "--api-key")
    first = capsys.readouterr().out.strip().splitlines()[-1]
    call_command("create_account", "--email", "ops@example.com", "--api-key")
    second = capsys.readouterr().out.strip().splitlines()[-1]
    assert first.startswith("exo_") and second.startswith("exo_") and first != second
    assert User.objects.filter(email="ops@example.com").count() == 1
    for key in (first, second):
        assert APIClient().get("/api/v1/me/", HTTP_X_API_KEY=key).json()["email"] == "ops@example.com"


def _me(secret):
    return APIClient().get("/api/v1/me/", HTTP_AUTHORIZATION=f"Bearer {secret}")


def test_cached_key_stops_working_on_revoke(alice):
    issued = api_key_create(actor=alice, name="hot")
    assert _me(issued.secret).status_code == 200  # now cached
    api_key_revoke(actor=alice, key_id=issued.key.id)
    assert _me(issued.secret).json()["error"]["code"] == "revoked_api_key"


def test_cached_key_stops_working_when_revoked_outside_the_service(alice):
    issued = api_key_create(actor=alice, name="hot")
    assert _me(issued.secret).status_code == 200
    key = ApiKey.objects.get(id=issued.key.id)
    key.revoked_at = key.created
    key.save()  # e.g. from Django admin
    assert _me(issued.secret).status_code == 401


def test_cached_key_stops_working_when_the_account_is_disabled_or_deleted(alice, bob):
    issued = api_key_create(actor=alice, name="hot")
    assert _me(issued.secret).status_code == 200
    alice.is_active = False
    alice.save()
    assert _me(issued.secret).json()["error"]["code"] == "account_disabled"
    other = api_key_create(actor=bob, name="hot")
    assert _me(other.secret).status_code == 200
    bob.delete()
    assert _me(other.secret).status_code == 401


def _raw_cached_entry(prefix: str) -> bytes:
    client = redis.Redis.from_url(settings.CACHES["default"]["LOCATION"])
    try:
        raw = client.get(cache.make_key(f"apikey:v3:{prefix}"))
    finally:
        client.close()
    assert raw is not None, "the key was not cached"
    return bytes(raw)


def test_cached_key_is_a_small_dict_without_the_user_or_password_hash(alice):
    issued = api_key_create(actor=alice, name="hot")
    assert _me(issued.secret).status_code == 200  # cached now
    raw = _raw_cached_entry(issued.key.prefix)
    alice.refresh_from_db()
    assert alice.password.encode() not in raw and b"md5$" not in raw
    # Only builtin values: no class is referenced, so no model instance (User, ApiKey) is pickled.
    assert not [op.name for op, _arg, _pos in pickletools.genops(raw) if "GLOBAL" in op.name or "REDUCE" in op.name]
    entry = pickle.loads(raw)  # noqa: S301  (our own cache entry, read to check its shape)
    assert set(entry) == {"v", "key", "user"}
    assert set(entry["user"]) == {"id", "is_active", "is_staff", "is_superuser", "is_platform"}
    assert entry["user"]["id"] == alice.id and entry["key"]["digest"] == issued.key.digest
    # The key's restrictions ride along: the permission check and the cap need no database read.
    assert (entry["key"]["read_only"], entry["key"]["monthly_credit_cap"]) == (False, None)
    # The cached entry authenticates on its own, and the account's email still reads right.
    body = _me(issued.secret).json()
    assert body["id"] == alice.id and body["email"] == alice.email
