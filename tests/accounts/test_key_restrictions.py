"""Read-only and monthly-capped API keys: created and edited over /api/v1/keys/ and the web page, enforced by REST."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from billing.models import CreditEntry
from billing.services import credit_balance, credits_grant_admin
from exograph.accounts.models import ApiKey
from exograph.accounts.services import api_key_create
from exograph.documents.models import Document

pytestmark = pytest.mark.django_db

NOTE = {"text": "Ada Lovelace wrote the first program for the Analytical Engine.", "title": "Ada"}


def _client(secret: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


def _fund(user, amount=100):  # type: ignore[no-untyped-def]
    credits_grant_admin(account=user, amount=amount, actor=None, note="tests")


def test_keys_are_created_read_only_or_capped_over_rest_and_listed_with_their_spend(alice, alice_key):
    client = _client(alice_key)
    read_only = client.post("/api/v1/keys/", {"name": "agent", "read_only": True}, format="json")
    assert read_only.status_code == 201, read_only.json()
    body = read_only.json()
    assert (body["read_only"], body["permission"], body["monthly_credit_cap"]) == (True, "read_only", None)
    assert body["key"].startswith("exo_") and body["spent_this_month"] == 0
    capped = client.post("/api/v1/keys/", {"name": "budget", "monthly_credit_cap": 250}, format="json")
    assert capped.status_code == 201 and capped.json()["monthly_credit_cap"] == 250
    assert capped.json()["permission"] == "full"
    listed = {k["name"]: k for k in client.get("/api/v1/keys/").json()["results"]}
    assert listed["agent"]["read_only"] is True and listed["budget"]["monthly_credit_cap"] == 250
    assert "key" not in listed["agent"]  # the secret is shown once


@pytest.mark.parametrize("cap", [-1, 10_000_001, "lots", 2.5])
def test_a_bad_cap_is_a_400_naming_the_field(alice_key, cap):
    response = _client(alice_key).post("/api/v1/keys/", {"name": "x", "monthly_credit_cap": cap}, format="json")
    assert response.status_code == 400
    assert "monthly_credit_cap" in response.json()["error"]["fields"]


def test_a_read_only_key_reads_but_every_write_is_refused_with_403_naming_its_permission(alice):
    _fund(alice)
    issued = api_key_create(actor=alice, name="reader", read_only=True)
    client = _client(issued.secret)
    assert client.get("/api/v1/graphs/").status_code == 200
    assert client.get("/api/v1/documents/").status_code == 200
    assert client.get("/api/v1/entities/search", {"query": "Ada"}).status_code == 200
    assert client.get("/api/v1/chat/sessions/").status_code == 200
    for method, path, body in [
        ("post", "/api/v1/documents/", NOTE),
        ("post", "/api/v1/chat/sessions/", {"title": "t"}),
        ("post", "/api/v1/chat/messages/", {"message": "hi"}),
        ("post", "/api/v1/graphs/", {"name": "g", "graph_scope": "private"}),
        ("post", "/api/v1/keys/", {"name": "escape"}),
        ("patch", f"/api/v1/keys/{issued.key.pk}/", {"read_only": False}),
        ("delete", f"/api/v1/keys/{issued.key.pk}/", None),
        ("post", "/api/v1/billing/checkout/", {"pack": "starter"}),
    ]:
        response = getattr(client, method)(path, body, format="json")
        assert response.status_code == 403, (path, response.content)
        error = response.json()["error"]
        assert error["code"] == "key_read_only" and error["key_permission"] == "read_only"
        assert error["message"].startswith(f"This API key ({issued.key.display_prefix}) is read-only: it may search")
        assert path in error["message"] and "full permission" in error["hint"]
    assert not Document.objects.filter(owner=alice).exists()
    assert credit_balance(account=alice) == 100
    assert ApiKey.objects.filter(user=alice).count() == 1
    assert ApiKey.objects.get(pk=issued.key.pk).read_only is True


def test_a_capped_key_may_not_create_change_or_revoke_keys(alice, alice_key):
    capped = api_key_create(actor=alice, name="capped", monthly_credit_cap=50)
    client = _client(capped.secret)
    other = ApiKey.objects.get(user=alice, name="tests")
    for method, path, body in [
        ("post", "/api/v1/keys/", {"name": "uncapped"}),
        ("patch", f"/api/v1/keys/{capped.key.pk}/", {"monthly_credit_cap": None}),
        ("delete", f"/api/v1/keys/{other.pk}/", None),
    ]:
        response = getattr(client, method)(path, body, format="json")
        assert response.status_code == 403, response.content
        assert response.json()["error"]["code"] == "key_restricted"
        assert "capped at 50 credits a month" in response.json()["error"]["message"]
    assert ApiKey.objects.get(pk=capped.key.pk).monthly_credit_cap == 50
    assert ApiKey.objects.get(pk=other.pk).revoked_at is None


def test_patch_changes_permission_and_cap_and_the_next_request_obeys_at_once(alice, alice_key):
    _fund(alice)
    agent = api_key_create(actor=alice, name="agent")
    agent_client = _client(agent.secret)
    assert agent_client.get("/api/v1/me/").status_code == 200  # cached now
    owner = _client(alice_key)
    changed = owner.patch(f"/api/v1/keys/{agent.key.pk}/", {"read_only": True, "name": "agent-ro"}, format="json")
    assert changed.status_code == 200, changed.json()
    assert (changed.json()["name"], changed.json()["permission"]) == ("agent-ro", "read_only")
    refused = agent_client.post("/api/v1/documents/", NOTE, format="json")
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "key_read_only"
    capped = owner.patch(f"/api/v1/keys/{agent.key.pk}/", {"read_only": False, "monthly_credit_cap": 0}, format="json")
    assert capped.json()["monthly_credit_cap"] == 0 and capped.json()["read_only"] is False
    over = agent_client.post("/api/v1/documents/", NOTE, format="json")
    assert over.status_code == 403 and over.json()["error"]["code"] == "key_monthly_cap_reached"
    uncapped = owner.patch(f"/api/v1/keys/{agent.key.pk}/", {"monthly_credit_cap": None}, format="json")
    assert uncapped.json()["monthly_credit_cap"] is None
    assert agent_client.post("/api/v1/documents/", NOTE, format="json").status_code == 201


def test_patch_of_a_foreign_or_revoked_key_is_404_or_409(alice, alice_key, charlie, charlie_key):
    charlies_other = api_key_create(actor=charlie, name="charlie's agent")
    response = _client(alice_key).patch(f"/api/v1/keys/{charlies_other.key.pk}/", {"read_only": True}, format="json")
    assert response.status_code == 404
    assert ApiKey.objects.get(pk=charlies_other.key.pk).read_only is False
    own = _client(charlie_key).patch(f"/api/v1/keys/{charlies_other.key.pk}/", {"read_only": True}, format="json")
    assert own.status_code == 200  # the positive control: charlie may change his own key
    _client(alice_key).delete(f"/api/v1/keys/{ApiKey.objects.get(user=alice).pk}/")
    revoked = ApiKey.objects.get(user=alice)
    fresh = api_key_create(actor=alice, name="fresh")
    again = _client(fresh.secret).patch(f"/api/v1/keys/{revoked.pk}/", {"read_only": True}, format="json")
    assert again.status_code == 409 and again.json()["error"]["code"] == "key_revoked"


def test_a_capped_keys_upload_past_its_cap_is_refused_with_what_is_left_and_nothing_charged(alice):
    _fund(alice)
    capped = api_key_create(actor=alice, name="agent", monthly_credit_cap=10)
    client = _client(capped.secret)
    first = client.post("/api/v1/documents/", NOTE, format="json")
    assert first.status_code == 201, first.json()
    assert first.json()["credits_charged"] == 6
    second = client.post("/api/v1/documents/", {**NOTE, "title": "Ada again", "text": NOTE["text"] + " Again."})
    assert second.status_code == 403, second.json()
    error = second.json()["error"]
    assert error["code"] == "key_monthly_cap_reached"
    assert error["message"] == (
        "This API key's monthly credit cap is 10 credits; 6 were spent this month, 4 left, and this needs 6."
    )
    assert (error["remaining"], error["needed"], error["monthly_credit_cap"]) == (4, 6, 10)
    assert credit_balance(account=alice) == 94
    assert Document.objects.filter(owner=alice).count() == 1  # the refused upload left nothing behind
    assert CreditEntry.objects.filter(api_key_id=capped.key.pk).count() == 1
    listed = _client(api_key_create(actor=alice, name="owner").secret).get("/api/v1/keys/").json()["results"]
    assert next(k for k in listed if k["name"] == "agent")["spent_this_month"] == 6


def test_the_api_keys_page_creates_restricted_keys_and_edits_them(client, alice):
    assert client.login(email=alice.email, password="correct-horse-battery-staple")
    created = client.post("/account/keys/", {"name": "claude", "read_only": "on", "monthly_credit_cap": "300"})
    assert created.status_code == 200
    key = ApiKey.objects.get(user=alice, name="claude")
    assert key.read_only is True and key.monthly_credit_cap == 300
    page = created.content.decode()
    assert "read-only" in page and "0 of 300 (cap) credits" in page
    edited = client.post(f"/account/keys/{key.pk}/edit/", {"monthly_credit_cap": ""}, follow=True)
    key.refresh_from_db()
    assert key.read_only is False and key.monthly_credit_cap is None
    assert f"Key {key.display_prefix} saved: full permission, no cap." in edited.content.decode()
    bad = client.post(f"/account/keys/{key.pk}/edit/", {"monthly_credit_cap": "-5"}, follow=True)
    assert "Not saved. Monthly cap:" in bad.content.decode()
    key.refresh_from_db()
    assert key.monthly_credit_cap is None


def test_the_api_keys_page_cannot_edit_another_accounts_key(client, alice, charlie):
    charlies = api_key_create(actor=charlie, name="charlie's")
    assert client.login(email=alice.email, password="correct-horse-battery-staple")
    response = client.post(f"/account/keys/{charlies.key.pk}/edit/", {"read_only": "on"}, follow=True)
    assert "No such API key." in response.content.decode()
    assert ApiKey.objects.get(pk=charlies.key.pk).read_only is False


def test_the_mcp_setup_page_points_agents_to_read_only_and_capped_keys(client, alice):
    assert client.login(email=alice.email, password="correct-horse-battery-staple")
    page = client.get("/mcp-setup/").content.decode()
    assert "<strong>read-only</strong>" in page and "<strong>monthly credit cap</strong>" in page
    assert "exo_YOUR_API_KEY" in page  # the snippets carry the key placeholder
