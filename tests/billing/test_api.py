"""REST and web contract of billing: balance, ledger, packs, billing page, admin adjustments."""

from __future__ import annotations

import pytest

from billing.models import CreditEntry, EntryKind
from billing.services import credit_balance, credits_charge
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_balance(alice, alice_client, fund):
    fund(alice, 42)
    body = alice_client.get("/api/v1/billing/balance").json()
    assert body["balance"] == 42 and body["held"] == 0 and body["plan"] == "standard"
    assert body["rate_limits"] == {"per_minute": 60, "per_day": 10000}
    assert alice_client.get("/api/v1/billing/balance/").status_code == 200


def test_balance_needs_authentication(anon_client):
    response = anon_client.get("/api/v1/billing/balance")
    assert response.status_code == 401 and response.json()["error"]["code"] == "unauthenticated"


def test_ledger_is_paged_newest_first_and_own_only(alice, bob, alice_client, bob_client, fund):
    fund(alice, 100)
    fund(bob, 5)
    for i in range(5):
        credits_charge(account=alice, action="chat.snap", idempotency_key=f"m{i}")
    page = alice_client.get("/api/v1/billing/ledger?limit=2").json()
    assert page["count"] == 6 and len(page["results"]) == 2 and page["next"]
    first = page["results"][0]
    assert first["kind"] == "charge" and first["amount"] == -3 and first["balance_after"] == 85
    rest = alice_client.get("/api/v1/billing/ledger?limit=10&offset=2").json()["results"]
    assert rest[-1]["kind"] == "admin_adjust"
    assert bob_client.get("/api/v1/billing/ledger").json()["count"] == 1


def test_packs(alice_client):
    packs = alice_client.get("/api/v1/billing/packs").json()["results"]
    assert [p["credits"] for p in packs] == [500, 2000, 10000]
    assert all(p["price"] > 0 and p["currency"] == "usd" for p in packs)


def test_checkout_needs_a_pack(alice_client):
    response = alice_client.post("/api/v1/billing/checkout/", {}, format="json")
    assert response.status_code == 400 and "pack" in response.json()["error"]["message"]


def test_billing_page_shows_balance_and_history(client, alice, fund):
    fund(alice, 77)
    client.force_login(alice)
    page = client.get("/billing/")
    assert page.status_code == 200
    assert b'<strong id="balance">77</strong>' in page.content and b"Admin adjustment" in page.content
    assert b'href="/billing/"' in client.get("/billing/").content  # the nav link


def test_billing_page_needs_login(client):
    assert client.get("/billing/").status_code == 302


def test_admin_adds_an_adjustment_through_the_ledger(client, alice):
    admin = UserFactory(email="root@example.com", is_staff=True, is_superuser=True)
    client.force_login(admin)
    assert client.get("/admin/billing/creditentry/add/").status_code == 200
    response = client.post(
        "/admin/billing/creditentry/add/", {"user": alice.pk, "amount": 250, "note": "support ticket 7"}
    )
    assert response.status_code == 302, response.content[:2000]
    entry = CreditEntry.objects.get(account__user=alice)
    assert entry.kind == EntryKind.ADMIN_ADJUST and entry.amount == 250 and "support ticket 7" in entry.reference
    assert credit_balance(account=alice) == 250
    too_much = client.post("/admin/billing/creditentry/add/", {"user": alice.pk, "amount": -251, "note": "x"})
    assert too_much.status_code == 200 and b"remove at most 250" in too_much.content
    assert client.get("/admin/billing/creditaccount/").status_code == 200
    assert client.get(f"/admin/billing/creditentry/{entry.pk}/change/").status_code == 200  # view only
    assert credit_balance(account=alice) == 250
