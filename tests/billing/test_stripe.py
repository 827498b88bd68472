"""Stripe: Checkout Sessions through the real SDK against a loopback fake, and signed webhooks."""

from __future__ import annotations

import time
import uuid

import pytest

from billing.models import CheckoutSession, CreditEntry, EntryKind, StripeEvent, StripeEventStatus
from billing.services import checkout_session_create, credit_balance, credits_charge
from tests.billing.conftest import (
    WEBHOOK_SECRET,
    assert_ledger_whole,
    completed_session,
    event,
    run_concurrently,
    sign,
)

pytestmark = pytest.mark.django_db

WEBHOOK = "/api/v1/billing/webhooks/stripe/"


def deliver(client, payload: str, signature: str | None = "sign"):  # type: ignore[no-untyped-def]
    headers = {}
    if signature == "sign":
        signature = sign(payload)
    if signature is not None:
        headers["HTTP_STRIPE_SIGNATURE"] = signature
    return client.post(WEBHOOK, data=payload, content_type="application/json", **headers)


def purchases(user):  # type: ignore[no-untyped-def]
    return CreditEntry.objects.filter(account__user=user, kind=EntryKind.PURCHASE)


# --- checkout ------------------------------------------------------------------------------


def test_checkout_creates_a_stripe_session_through_the_sdk(alice_client, alice, fake_stripe):
    response = alice_client.post("/api/v1/billing/checkout/", {"pack": "pack_2000"}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["checkout_url"].startswith("https://checkout.stripe.com/") and body["credits"] == 2000
    sent = fake_stripe.requests[-1]
    assert sent["path"] == "/v1/checkout/sessions" and sent["auth"] == "Bearer sk_test_fake"
    assert sent["form"]["mode"] == ["payment"]
    assert sent["form"]["line_items[0][price_data][unit_amount]"] == ["1800"]
    assert sent["form"]["metadata[user_id]"] == [str(alice.pk)]
    session = CheckoutSession.objects.get(stripe_session_id=body["session_id"])
    assert session.account.user == alice and session.credits == 2000
    assert credit_balance(account=alice) == 0  # credits come with the webhook, not the redirect


def test_web_buy_button_redirects_to_stripe(client, alice, fake_stripe):
    client.force_login(alice)
    page = client.get("/billing/")
    assert page.status_code == 200 and b"pack_500" in page.content
    response = client.post("/billing/checkout/", {"pack": "pack_500"})
    assert response.status_code == 302 and response["Location"].startswith("https://checkout.stripe.com/")


def test_unknown_pack_is_400_and_nothing_sent(alice_client, fake_stripe):
    response = alice_client.post("/api/v1/billing/checkout/", {"pack": "pack_1000000"}, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "unknown_pack" and "pack_500" in error["hint"]
    assert fake_stripe.requests == [] and not CheckoutSession.objects.exists()


def test_stripe_error_is_clean_upstream_error(alice_client, fake_stripe):
    fake_stripe.fail_with = 500
    response = alice_client.post("/api/v1/billing/checkout/", {"pack": "pack_500"}, format="json")
    assert response.status_code == 502 and response.json()["error"]["code"] == "stripe_error"
    assert not CheckoutSession.objects.exists()


def test_purchases_disabled_without_stripe(alice_client, client, alice, settings):
    settings.USE_STRIPE = False
    settings.STRIPE_SECRET_KEY = ""
    response = alice_client.post("/api/v1/billing/checkout/", {"pack": "pack_500"}, format="json")
    assert response.status_code == 503
    error = response.json()["error"]
    assert error["code"] == "purchases_disabled" and "administrator" in error["hint"]
    client.force_login(alice)
    page = client.get("/billing/")
    assert b"Purchases are disabled" in page.content and b'name="pack"' not in page.content


# --- webhooks ------------------------------------------------------------------------------


def test_one_event_delivered_ten_times_grants_once(client, alice, fake_stripe):
    session = checkout_session_create(actor=alice, pack="pack_500")
    payload = event("checkout.session.completed", completed_session(session.stripe_session_id, user=alice))
    for _ in range(10):
        response = deliver(client, payload)
        assert response.status_code == 200 and response.json()["status"] == "processed"
    assert credit_balance(account=alice) == 500 and purchases(alice).count() == 1
    stored = StripeEvent.objects.get()
    assert stored.deliveries == 10 and stored.status == StripeEventStatus.PROCESSED
    assert_ledger_whole(alice)


def test_two_events_for_one_session_grant_once(client, alice, fake_stripe):
    """completed and async_payment_succeeded (different event ids) for the same session."""
    session = checkout_session_create(actor=alice, pack="pack_500")
    obj = completed_session(session.stripe_session_id, user=alice)
    assert deliver(client, event("checkout.session.completed", obj)).status_code == 200
    assert deliver(client, event("checkout.session.async_payment_succeeded", obj)).status_code == 200
    assert credit_balance(account=alice) == 500 and purchases(alice).count() == 1


def test_later_event_delivered_before_earlier_one(client, alice, fake_stripe):
    first = checkout_session_create(actor=alice, pack="pack_500")
    second = checkout_session_create(actor=alice, pack="pack_2000")
    earlier = event("checkout.session.completed", completed_session(first.stripe_session_id, user=alice))
    later = event("checkout.session.completed", completed_session(second.stripe_session_id, user=alice))
    assert deliver(client, later).status_code == 200
    assert deliver(client, earlier).status_code == 200
    assert deliver(client, later).status_code == 200
    assert credit_balance(account=alice) == 2500 and purchases(alice).count() == 2
    assert_ledger_whole(alice)


def test_refund_delivered_before_its_purchase_is_retried_then_applied(client, alice, fake_stripe):
    session = checkout_session_create(actor=alice, pack="pack_500")
    purchase = event(
        "checkout.session.completed", completed_session(session.stripe_session_id, user=alice, payment_intent="pi_1")
    )
    refund = event(
        "charge.refunded",
        {"id": "ch_1", "object": "charge", "payment_intent": "pi_1", "amount": 500, "amount_refunded": 500},
    )
    early = deliver(client, refund)
    assert early.status_code == 503 and early.json()["error"]["code"] == "event_not_ready"
    assert deliver(client, purchase).status_code == 200
    assert credit_balance(account=alice) == 500
    assert deliver(client, refund).status_code == 200  # Stripe's retry
    assert deliver(client, refund).status_code == 200
    assert credit_balance(account=alice) == 0
    refunds = CreditEntry.objects.filter(account__user=alice, kind=EntryKind.REFUND)
    assert [e.amount for e in refunds] == [-500]
    assert_ledger_whole(alice)


def test_partial_refund_then_dispute_takes_back_the_rest(client, alice, fake_stripe):
    session = checkout_session_create(actor=alice, pack="pack_2000")
    deliver(
        client,
        event(
            "checkout.session.completed",
            completed_session(session.stripe_session_id, user=alice, payment_intent="pi_2"),
        ),
    )
    deliver(
        client,
        event("charge.refunded", {"id": "ch_2", "payment_intent": "pi_2", "amount": 1800, "amount_refunded": 900}),
    )
    assert credit_balance(account=alice) == 1000
    deliver(
        client,
        event("charge.dispute.created", {"id": "dp_1", "object": "dispute", "payment_intent": "pi_2", "amount": 900}),
    )
    assert credit_balance(account=alice) == 0
    session.refresh_from_db()
    assert session.credits_revoked == 2000 and session.credits_shortfall == 0
    assert_ledger_whole(alice)


def test_refund_after_credits_were_spent_clamps_at_zero_and_records_shortfall(client, alice, fake_stripe):
    session = checkout_session_create(actor=alice, pack="pack_500")
    deliver(
        client,
        event(
            "checkout.session.completed",
            completed_session(session.stripe_session_id, user=alice, payment_intent="pi_3"),
        ),
    )
    for i in range(40):
        credits_charge(account=alice, action="chat.ponder", idempotency_key=f"m{i}")  # 400 spent
    response = deliver(
        client,
        event("charge.refunded", {"id": "ch_3", "payment_intent": "pi_3", "amount": 500, "amount_refunded": 500}),
    )
    assert response.status_code == 200
    assert credit_balance(account=alice) == 0
    session.refresh_from_db()
    assert session.credits_revoked == 500 and session.credits_shortfall == 400
    refund = CreditEntry.objects.get(account__user=alice, kind=EntryKind.REFUND)
    assert refund.amount == -100 and "shortfall 400" in refund.reference
    assert_ledger_whole(alice)


def test_bad_signature_is_400_and_nothing_granted(client, alice, fake_stripe):
    session = checkout_session_create(actor=alice, pack="pack_500")
    payload = event("checkout.session.completed", completed_session(session.stripe_session_id, user=alice))
    for signature in [sign(payload, secret="whsec_wrong"), "t=1,v1=deadbeef", "garbage",
                      sign(payload, timestamp=int(time.time()) - 3600)]:  # fmt: skip
        response = deliver(client, payload, signature)
        assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_signature"
    tampered = payload.replace("pack_500", "pack_10000")
    assert deliver(client, tampered, sign(payload)).status_code == 400
    assert credit_balance(account=alice) == 0 and not StripeEvent.objects.exists()


def test_missing_signature_header_is_400(client, webhooks_on):
    response = deliver(client, event("checkout.session.completed", {"id": "cs_x"}), None)
    assert response.status_code == 400 and response.json()["error"]["code"] == "missing_signature"
    assert not StripeEvent.objects.exists()


def test_unknown_event_type_is_stored_and_ignored(client, webhooks_on):
    payload = event("customer.created", {"id": "cus_1"})
    response = deliver(client, payload)
    assert response.status_code == 200 and response.json()["status"] == "ignored"
    assert StripeEvent.objects.get().status == StripeEventStatus.IGNORED


def test_session_not_from_us_is_stored_as_failed(client, webhooks_on):
    payload = event("checkout.session.completed", {"id": "cs_foreign", "payment_status": "paid", "metadata": {}})
    assert deliver(client, payload).status_code == 200
    stored = StripeEvent.objects.get()
    assert stored.status == StripeEventStatus.FAILED and "not created by this server" in stored.error
    assert not CreditEntry.objects.exists()


def test_unpaid_completed_session_grants_nothing_yet(client, alice, fake_stripe):
    session = checkout_session_create(actor=alice, pack="pack_500")
    obj = {**completed_session(session.stripe_session_id, user=alice), "payment_status": "unpaid"}
    assert deliver(client, event("checkout.session.completed", obj)).json()["status"] == "ignored"
    assert credit_balance(account=alice) == 0


@pytest.mark.django_db(transaction=True)
def test_concurrent_deliveries_grant_once(client, fake_stripe):
    from tests.factories import UserFactory

    user = UserFactory()
    session = checkout_session_create(actor=user, pack="pack_10000")
    payload = event("checkout.session.completed", completed_session(session.stripe_session_id, user=user),
                    event_id=f"evt_{uuid.uuid4().hex}")  # fmt: skip
    signature = sign(payload)

    def post(i: int):  # type: ignore[no-untyped-def]
        from django.test import Client

        return Client().post(WEBHOOK, data=payload, content_type="application/json", HTTP_STRIPE_SIGNATURE=signature)

    responses = [r for _, r in run_concurrently(post, 10, workers=10)]
    assert [r.status_code for r in responses] == [200] * 10
    assert credit_balance(account=user) == 10_000 and purchases(user).count() == 1
    assert StripeEvent.objects.get().deliveries == 10
    assert WEBHOOK_SECRET  # the deliveries above were signed with the endpoint secret
