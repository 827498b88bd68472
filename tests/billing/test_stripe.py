"""Stripe: Checkout Sessions through the real SDK against a loopback fake, and signed webhooks."""

from __future__ import annotations

import re
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
    html = page.content.decode()
    assert "Purchases are disabled" in html and "Stripe is not configured" in html  # the reason
    # The packs are still shown (what one would buy), their buttons disabled.
    buttons = re.findall(r'<button type="submit" id="buy-[^"]+"[^>]*>', html)
    assert buttons and all(" disabled" in b for b in buttons)


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
    later = event(
        "checkout.session.completed", completed_session(second.stripe_session_id, user=alice, pack="pack_2000")
    )
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
            completed_session(session.stripe_session_id, user=alice, pack="pack_2000", payment_intent="pi_2"),
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
    payload = event("checkout.session.completed",
                    completed_session(session.stripe_session_id, user=user, pack="pack_10000"),
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


# --- trust: what a signed delivery must also be -------------------------------------------


def test_checkout_uses_a_stripe_client_and_leaves_the_sdk_globals_alone(alice, fake_stripe, settings):
    import stripe

    before = (stripe.api_base, stripe.api_key)
    checkout_session_create(actor=alice, pack="pack_500")
    assert (stripe.api_base, stripe.api_key) == before  # nothing module-global was mutated
    sent = fake_stripe.requests[-1]
    assert sent["auth"] == "Bearer sk_test_fake" and sent["stripe_version"] == settings.STRIPE_API_VERSION


def test_checkout_sends_an_idempotency_key_and_a_retried_request_gets_the_same_session(alice_client, fake_stripe):
    first = alice_client.post("/api/v1/billing/checkout/", {"pack": "pack_500"}, format="json",
                              HTTP_IDEMPOTENCY_KEY="buy-1")  # fmt: skip
    again = alice_client.post("/api/v1/billing/checkout/", {"pack": "pack_500"}, format="json",
                              HTTP_IDEMPOTENCY_KEY="buy-1")  # fmt: skip
    assert first.status_code == again.status_code == 201
    assert first.json()["session_id"] == again.json()["session_id"]
    assert CheckoutSession.objects.count() == 1
    keys = [r["idempotency_key"] for r in fake_stripe.requests]
    assert len(keys) == 2 and keys[0] == keys[1] and keys[0] and "buy-1" in keys[0]
    other = alice_client.post("/api/v1/billing/checkout/", {"pack": "pack_500"}, format="json")
    assert other.status_code == 201 and other.json()["session_id"] != first.json()["session_id"]
    assert fake_stripe.requests[-1]["idempotency_key"] not in (None, keys[0])  # a key of its own


def test_sdk_retry_of_a_failed_checkout_reuses_the_idempotency_key(alice, fake_stripe):
    fake_stripe.fail_once_retryable = True
    session = checkout_session_create(actor=alice, pack="pack_500")
    assert len(fake_stripe.requests) == 2  # a 503 asking for a retry, then the session
    assert fake_stripe.requests[0]["idempotency_key"] == fake_stripe.requests[1]["idempotency_key"]
    assert CheckoutSession.objects.get().stripe_session_id == session.stripe_session_id


def test_event_in_another_api_version_is_400_and_nothing_stored(client, alice, fake_stripe):
    session = checkout_session_create(actor=alice, pack="pack_500")
    obj = completed_session(session.stripe_session_id, user=alice)
    response = deliver(client, event("checkout.session.completed", obj, api_version="2019-02-19"))
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "unsupported_api_version" and "STRIPE_API_VERSION" in error["hint"]
    assert credit_balance(account=alice) == 0 and not StripeEvent.objects.exists()


def test_event_from_the_other_mode_is_400_and_nothing_stored(client, alice, fake_stripe, settings):
    session = checkout_session_create(actor=alice, pack="pack_500")
    obj = completed_session(session.stripe_session_id, user=alice)
    response = deliver(client, event("checkout.session.completed", obj, livemode=True))  # our key is sk_test_
    assert response.status_code == 400 and response.json()["error"]["code"] == "livemode_mismatch"
    settings.STRIPE_SECRET_KEY = "sk_live_fake"
    response = deliver(client, event("checkout.session.completed", obj, livemode=False))
    assert response.status_code == 400 and response.json()["error"]["code"] == "livemode_mismatch"
    assert credit_balance(account=alice) == 0 and not StripeEvent.objects.exists()


def test_session_not_in_our_table_grants_nothing_even_with_our_metadata(client, alice, webhooks_on):
    """Anyone with a Stripe account can create a session carrying our metadata; only our rows count."""
    obj = completed_session("cs_made_elsewhere", user=alice, pack="pack_10000")
    assert deliver(client, event("checkout.session.completed", obj)).status_code == 200
    stored = StripeEvent.objects.get()
    assert stored.status == StripeEventStatus.FAILED and "not created by this server" in stored.error
    assert credit_balance(account=alice) == 0 and not CheckoutSession.objects.exists()


@pytest.mark.parametrize(("field", "value"), [("amount_total", 1), ("amount_total", None), ("currency", "eur")])
def test_paid_amount_or_currency_other_than_the_packs_grants_nothing(client, alice, fake_stripe, field, value):
    session = checkout_session_create(actor=alice, pack="pack_2000")
    obj = {**completed_session(session.stripe_session_id, user=alice, pack="pack_2000"), field: value}
    response = deliver(client, event("checkout.session.completed", obj))
    assert response.status_code == 200 and response.json()["status"] == "failed"
    stored = StripeEvent.objects.get()
    assert "no credits granted" in stored.error and "1800 usd" in stored.error
    assert credit_balance(account=alice) == 0 and not purchases(alice).exists()


def test_session_with_no_payment_required_grants_nothing(client, alice, fake_stripe):
    session = checkout_session_create(actor=alice, pack="pack_500")
    obj = {**completed_session(session.stripe_session_id, user=alice), "payment_status": "no_payment_required",
           "amount_total": 0}  # fmt: skip
    response = deliver(client, event("checkout.session.completed", obj))
    assert response.status_code == 200 and response.json()["status"] == "failed"
    assert "not paid" in StripeEvent.objects.get().error
    assert credit_balance(account=alice) == 0 and not purchases(alice).exists()


@pytest.mark.parametrize(
    "body",
    ["[1, 2]", '"evt_1"', "null", "42", "not json at all",
     '{"id": "evt_1", "type": "checkout.session.completed"}',
     '{"id": "evt_1", "object": "list", "type": "x", "api_version": "V", "livemode": false, "data": {"object": {}}}',
     '{"id": "evt_1", "object": "event", "type": "checkout.session.completed", "api_version": "V", '
     '"livemode": false, "data": "cs_1"}',
     '{"id": "evt_1", "object": "event", "type": "checkout.session.completed", "api_version": "V", '
     '"livemode": false, "data": {"object": ["cs_1"]}}',
     '{"id": ["evt_1"], "object": "event", "type": "x", "api_version": "V", "livemode": false, '
     '"data": {"object": {}}}'],
)  # fmt: skip
def test_signed_body_that_is_not_an_event_object_is_400(client, webhooks_on, settings, body):
    payload = body.replace('"V"', f'"{settings.STRIPE_API_VERSION}"')
    response = deliver(client, payload)
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == "invalid_payload"
    assert not StripeEvent.objects.exists()


def test_api_version_default_is_the_pinned_sdks():
    """Upgrading stripe changes the SDK's version: then create the webhook endpoint with the new one too."""
    import stripe
    from django.conf import settings

    assert settings.STRIPE_API_VERSION == stripe.api_version
