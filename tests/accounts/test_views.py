from __future__ import annotations

import pytest
from django.test import Client

from exograph.accounts.models import ApiKey, User

pytestmark = pytest.mark.django_db

PASSWORD = "correct-horse-battery-staple"


def test_signup_logs_in_and_shows_dashboard():
    client = Client()
    response = client.post(
        "/signup/", {"email": "new@example.com", "password": "a-very-long-pw-1", "password_confirm": "a-very-long-pw-1"}
    )
    assert response.status_code == 302
    assert client.get("/").status_code == 200
    assert User.objects.filter(email="new@example.com").exists()


def test_signup_rejects_weak_password_and_duplicate_email(alice):
    client = Client()
    weak = client.post("/signup/", {"email": "x@example.com", "password": "123", "password_confirm": "123"})
    assert weak.status_code == 400 and not User.objects.filter(email="x@example.com").exists()
    dup = client.post(
        "/signup/",
        {"email": "ALICE@example.com", "password": "a-very-long-pw-1", "password_confirm": "a-very-long-pw-1"},
    )
    assert dup.status_code == 400
    assert b"already exists" in dup.content


def test_login_logout_and_password_change(alice):
    client = Client()
    assert client.get("/billing/").status_code == 302  # login required ("/" is the public landing page)
    response = client.post("/login/", {"username": alice.email, "password": PASSWORD})
    assert response.status_code == 302
    assert client.get("/").status_code == 200
    changed = client.post(
        "/account/password/",
        {"old_password": PASSWORD, "new_password1": "another-long-pw-9", "new_password2": "another-long-pw-9"},
    )
    assert changed.status_code == 302
    alice.refresh_from_db()
    assert alice.check_password("another-long-pw-9")
    client.post("/logout/")
    assert client.get("/billing/").status_code == 302


def test_api_keys_page_creates_shows_once_and_revokes(alice):
    client = Client()
    client.force_login(alice)
    created = client.post("/account/keys/", {"name": "desktop"})
    assert created.status_code == 200
    secret = created.context["new_secret"]
    assert secret.startswith("exo_") and secret.encode() in created.content
    again = client.get("/account/keys/")
    assert secret.encode() not in again.content
    key = ApiKey.objects.get(user=alice, name="desktop")
    assert key.display_prefix.encode() in again.content.replace(b"&hellip;", "…".encode())
    client.post(f"/account/keys/{key.id}/revoke/")
    key.refresh_from_db()
    assert key.revoked_at is not None


def test_charlie_cannot_revoke_alices_key_from_the_web(alice, charlie):
    key = ApiKey.objects.create(user=alice, name="k", prefix="abcdefabcdef", digest="0" * 64)
    client = Client()
    client.force_login(charlie)
    client.post(f"/account/keys/{key.id}/revoke/")
    key.refresh_from_db()
    assert key.revoked_at is None


def test_login_page_renders():
    response = Client().get("/login/")
    assert response.status_code == 200
    assert b"Log in" in response.content
