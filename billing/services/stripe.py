"""Stripe: Checkout Sessions for credit packs, and the webhook that grants and takes back credits.

Exactly once: each event id is stored once (`StripeEvent`), its handler runs under that row's
lock, and the grant itself is a ledger entry keyed on the Checkout Session id
(``purchase:<cs_…>``), so however many times, in whatever order, Stripe delivers
`checkout.session.completed` (or `checkout.session.async_payment_succeeded`), the pack is
granted once.

Refunds and disputes take the pack's credits back (a partial refund takes back its share,
rounded down). Credits already spent cannot be taken back: the balance never goes below
zero, the part that could not be removed is recorded as a shortfall on the CheckoutSession
and in the refund entry's reference, and the ledger stays whole.

Out of order: a refund or dispute that arrives before its purchase was processed is stored
as failed and answered 503, so Stripe delivers it again later; by then the purchase is there.

Trust: a delivery is handled only when its signature verifies, its body is an event object,
its `api_version` is ours (settings.STRIPE_API_VERSION) and its `livemode` matches our key;
otherwise it answers 400 and nothing is stored, so Stripe's retries land once the
configuration agrees. Credits are granted only for a Checkout Session this server created,
paid (`payment_status == "paid"`) with exactly the row's amount and currency; the session's
metadata is never trusted.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import stripe
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from billing.models import CheckoutSession, EntryKind, StripeEvent, StripeEventStatus
from billing.services.ledger import _check_key, credit_account_for, credits_grant, credits_remove_clamped
from exograph.accounts.models import User
from exograph.core.errors import ExoGraphError, PermanentError, ServiceUnavailable, ValidationError

logger = logging.getLogger(__name__)

DONE = (StripeEventStatus.PROCESSED, StripeEventStatus.IGNORED)


class EventNotReady(ServiceUnavailable):
    """The event depends on one not processed yet; Stripe will deliver it again."""

    code = "event_not_ready"
    hint = "Stripe retries this delivery later."


def _purchases_disabled() -> ServiceUnavailable:
    return ServiceUnavailable(
        "Purchases are disabled: Stripe is not configured on this server.",
        code="purchases_disabled",
        hint="An administrator can grant credits in the admin; set STRIPE_SECRET_KEY to enable purchases.",
    )


def pack_get(pack: object) -> dict[str, int]:
    packs: dict[str, dict[str, int]] = settings.BILLING_PACKS
    if not isinstance(pack, str) or pack not in packs:
        raise ValidationError(
            f"Unknown credit pack {str(pack)[:50]!r}.",
            code="unknown_pack",
            hint=f"Choose one of: {', '.join(packs)} (GET /api/v1/billing/packs).",
        )
    return packs[pack]


@lru_cache(maxsize=4)
def _client(api_key: str, api_base: str, api_version: str) -> stripe.StripeClient:
    """One SDK client per configuration; never the module's global state (api_base, api_key)."""
    return stripe.StripeClient(
        api_key,
        stripe_version=api_version,
        base_addresses={"api": api_base} if api_base else None,
        max_network_retries=2,  # safe: every POST carries our idempotency key
    )


def stripe_client() -> stripe.StripeClient:
    """The Stripe SDK client for the configured key, API base and API version."""
    return _client(settings.STRIPE_SECRET_KEY, settings.STRIPE_API_BASE, settings.STRIPE_API_VERSION)


def checkout_session_create(*, actor: User, pack: str, idempotency_key: str | None = None) -> CheckoutSession:
    """Create a Stripe Checkout Session for a credit pack; pay at its `url`. Credits come with the webhook.

    With an idempotency key, a retry returns the same session (Stripe answers the same key once).
    Raises ValidationError (unknown pack, bad key), ServiceUnavailable (Stripe off or unreachable),
    PermanentError.
    """
    chosen = pack_get(pack)
    caller_key = _check_key(idempotency_key) if idempotency_key is not None else uuid.uuid4().hex
    if not settings.USE_STRIPE:
        raise _purchases_disabled()
    base = settings.EXOGRAPH_PUBLIC_URL.rstrip("/")
    account = credit_account_for(user=actor)
    # Called outside any transaction: never hold a database transaction open across Stripe.
    try:
        session = stripe_client().v1.checkout.sessions.create(
            params={
                "mode": "payment",
                "line_items": [
                    {
                        "quantity": 1,
                        "price_data": {
                            "currency": settings.STRIPE_CURRENCY,
                            "unit_amount": chosen["price"],
                            "product_data": {"name": f"{chosen['credits']:,} ExoGraph credits"},
                        },
                    }
                ],
                "client_reference_id": str(actor.pk),
                "customer_email": actor.email,
                "metadata": {"user_id": str(actor.pk), "pack": pack, "credits": str(chosen["credits"])},
                "success_url": f"{base}/billing/?checkout=success",
                "cancel_url": f"{base}/billing/?checkout=cancelled",
            },
            # The SDK's own retries and the caller's retries reuse it: one session per purchase.
            options={"idempotency_key": f"checkout:{actor.pk}:{pack}:{caller_key}"},
        )
    except stripe.APIConnectionError as exc:
        raise ServiceUnavailable("Stripe is unreachable.", code="stripe_unavailable") from exc
    except stripe.StripeError as exc:
        logger.warning("stripe checkout failed for account %s: %s", actor.pk, type(exc).__name__)
        raise PermanentError(
            "Stripe refused to create the checkout session.", code="stripe_error", hint="Try again later."
        ) from exc
    checkout, _ = CheckoutSession.objects.get_or_create(
        stripe_session_id=str(session.id),
        defaults={
            "account": account,
            "pack": pack,
            "credits": chosen["credits"],
            "price": chosen["price"],
            "currency": settings.STRIPE_CURRENCY,
            "url": str(getattr(session, "url", "") or ""),
        },
    )
    return checkout


def _invalid_payload(why: str) -> ValidationError:
    return ValidationError(
        f"The webhook body is not a Stripe event object: {why}.",
        code="invalid_payload",
        hint="Send the event exactly as Stripe delivers it.",
    )


def _parse_event(payload: bytes) -> dict[str, Any]:
    """The verified body as an event dict. Raises ValidationError (400) for anything else."""
    try:
        data = json.loads(payload)
    except ValueError as exc:  # also UnicodeDecodeError
        raise _invalid_payload("not JSON") from exc
    if not isinstance(data, dict) or data.get("object") != "event":
        raise _invalid_payload('not an object with "object": "event"')
    for field in ("id", "type", "api_version"):
        if not isinstance(data.get(field), str) or not data[field]:
            raise _invalid_payload(f'"{field}" is not a string')
    if not isinstance(data.get("livemode"), bool):
        raise _invalid_payload('"livemode" is not a boolean')
    inner = data.get("data")
    if not isinstance(inner, dict) or not isinstance(inner.get("object"), dict):
        raise _invalid_payload('"data.object" is not an object')
    return data


def _live_key() -> bool:
    return str(settings.STRIPE_SECRET_KEY).startswith(("sk_live_", "rk_live_"))


def _check_event_fits(data: dict[str, Any]) -> None:
    """Refuse (400) an event rendered for another API version or from the other mode (test/live)."""
    if data["api_version"] != settings.STRIPE_API_VERSION:
        raise ValidationError(
            f"The event is in Stripe API version {data['api_version'][:40]!r}; this server reads "
            f"{settings.STRIPE_API_VERSION!r}.",
            code="unsupported_api_version",
            hint="Create the webhook endpoint with the API version in STRIPE_API_VERSION (or change the setting).",
        )
    if data["livemode"] != _live_key():
        mode, ours = ("live", "test") if data["livemode"] else ("test", "live")
        raise ValidationError(
            f"A {mode}-mode event was sent to a server using a {ours}-mode Stripe key.",
            code="livemode_mismatch",
            hint="Point each Stripe mode's webhook at the server that uses that mode's keys.",
        )


def stripe_webhook_receive(*, payload: bytes, signature: str | None) -> StripeEvent:
    """Verify a webhook delivery, store its event once and handle it (see stripe_event_handle).

    Raises ValidationError (missing/bad signature or payload: nothing stored), ServiceUnavailable
    (webhooks not configured), EventNotReady (stored; Stripe should deliver it again).
    """
    if not settings.STRIPE_WEBHOOK_SECRET:
        raise ServiceUnavailable(
            "Stripe webhooks are not configured on this server.",
            code="webhooks_disabled",
            hint="Set STRIPE_WEBHOOK_SECRET.",
        )
    if not signature:
        raise ValidationError(
            "The Stripe-Signature header is missing.",
            code="missing_signature",
            hint="Webhooks must come from Stripe, signed with the endpoint's secret.",
        )
    try:
        stripe.WebhookSignature.verify_header(
            payload.decode("utf-8", "replace"),
            signature,
            settings.STRIPE_WEBHOOK_SECRET,
            tolerance=settings.STRIPE_WEBHOOK_TOLERANCE,
        )
    except stripe.SignatureVerificationError as exc:
        raise ValidationError(
            "The Stripe signature does not verify (wrong secret, altered body or too old).",
            code="invalid_signature",
            hint="Check STRIPE_WEBHOOK_SECRET matches the endpoint's signing secret.",
        ) from exc
    data = _parse_event(payload)  # verified: the signature covers these exact bytes
    _check_event_fits(data)
    row, created = StripeEvent.objects.get_or_create(
        stripe_event_id=str(data["id"])[:255], defaults={"type": str(data["type"])[:100], "payload": data}
    )
    if not created:
        StripeEvent.objects.filter(pk=row.pk).update(deliveries=F("deliveries") + 1)
        if row.status in DONE:
            return row
    row = stripe_event_handle(event_id=row.stripe_event_id)
    if row.status == StripeEventStatus.FAILED and row.error.startswith(EventNotReady.code):
        raise EventNotReady(f"Event {row.stripe_event_id} waits for an earlier event; stored, retry later.")
    return row


def _session_for_completed(obj: dict[str, Any]) -> CheckoutSession:
    session_id = str(obj.get("id") or "")
    found = (
        # Not the user row: a deleted account's user is NULL, and PostgreSQL locks no outer-joined side.
        CheckoutSession.objects.select_for_update(of=("self", "account"))
        .select_related("account__user")
        .filter(stripe_session_id=session_id)
        .first()
    )
    if found is None:  # never from metadata alone: anyone can create a session with our metadata
        raise ValidationError(
            f"Checkout session {session_id[:100]} was not created by this server.", code="unknown_session"
        )
    return found


def _handle_checkout_completed(obj: dict[str, Any]) -> str:
    status = obj.get("payment_status")
    if status == "unpaid":
        return StripeEventStatus.IGNORED  # async payment methods: granted on async_payment_succeeded
    checkout = _session_for_completed(obj)
    if status != "paid":  # e.g. no_payment_required (a 100 % discount): nothing was paid for the pack
        raise ValidationError(
            f"Checkout session {checkout.stripe_session_id} was not paid (payment_status {str(status)[:30]!r}).",
            code="not_paid",
        )
    amount, currency = obj.get("amount_total"), str(obj.get("currency") or "").lower()
    if isinstance(amount, bool) or amount != checkout.price or currency != checkout.currency.lower():
        logger.warning("checkout %s paid amount/currency differ from the pack; not granted", checkout.pk)
        raise ValidationError(
            f"Checkout session {checkout.stripe_session_id} paid {str(amount)[:20]} {currency[:8]}, not "
            f"{checkout.price} {checkout.currency} for {checkout.pack}; no credits granted.",
            code="amount_mismatch",
        )
    user = checkout.account.user
    if user is None:  # the account was deleted after it opened the checkout: nobody to credit
        logger.warning("checkout %s completed for a deleted account; refund it", checkout.stripe_session_id)
        return StripeEventStatus.IGNORED
    credits_grant(
        account=user,
        amount=int(checkout.credits),
        kind=EntryKind.PURCHASE,
        key=f"purchase:{checkout.stripe_session_id}",
        reference=f"{checkout.credits} credits ({checkout.pack}), Stripe {checkout.stripe_session_id}",
    )
    if checkout.completed_at is None or not checkout.payment_intent:
        checkout.completed_at = checkout.completed_at or timezone.now()
        checkout.payment_intent = str(obj.get("payment_intent") or "")[:255]
        checkout.save(update_fields=["completed_at", "payment_intent", "modified"])
    return StripeEventStatus.PROCESSED


def _revoke(*, payment_intent: object, target: int | None, key: str, what: str) -> str:
    """Take back credits of the purchase paid by payment_intent until `target` (None = all) are revoked."""
    if not payment_intent:
        return StripeEventStatus.IGNORED
    checkout = (
        CheckoutSession.objects.select_for_update(of=("self", "account"))
        .select_related("account__user")
        .filter(payment_intent=str(payment_intent), completed_at__isnull=False)
        .first()
    )
    if checkout is None:
        raise EventNotReady(f"{EventNotReady.code}: no processed purchase for payment {payment_intent} yet.")
    goal = int(checkout.credits) if target is None else min(int(checkout.credits), target)
    delta = goal - int(checkout.credits_revoked)
    if delta <= 0:
        return StripeEventStatus.PROCESSED
    if checkout.account.user is None:  # a deleted account's credits went with it
        return StripeEventStatus.IGNORED
    removed, shortfall = credits_remove_clamped(
        account=checkout.account.user,
        amount=delta,
        kind=EntryKind.REFUND,
        key=key,
        reference=f"{what}: {checkout.pack}, Stripe {checkout.stripe_session_id}",
    )
    checkout.credits_revoked = F("credits_revoked") + delta
    checkout.credits_shortfall = F("credits_shortfall") + shortfall
    checkout.save(update_fields=["credits_revoked", "credits_shortfall", "modified"])
    logger.info("revoked %s credits (shortfall %s) for %s", removed, shortfall, checkout.stripe_session_id)
    return StripeEventStatus.PROCESSED


def _handle_charge_refunded(obj: dict[str, Any]) -> str:
    amount = int(obj.get("amount") or 0)
    refunded = int(obj.get("amount_refunded") or 0)
    if amount <= 0 or refunded <= 0:
        return StripeEventStatus.IGNORED
    checkout = CheckoutSession.objects.filter(payment_intent=str(obj.get("payment_intent") or "-")).first()
    credits = int(checkout.credits) if checkout else 0
    target = None if refunded >= amount else credits * refunded // amount
    return _revoke(
        payment_intent=obj.get("payment_intent"),
        target=target,
        key=f"stripe-refund:{obj.get('id')}:{refunded}",
        what="Stripe refund",
    )


def _handle_dispute_created(obj: dict[str, Any]) -> str:
    return _revoke(
        payment_intent=obj.get("payment_intent"),
        target=None,
        key=f"stripe-dispute:{obj.get('id')}",
        what="Stripe dispute",
    )


HANDLERS: dict[str, Callable[[dict[str, Any]], str]] = {
    "checkout.session.completed": _handle_checkout_completed,
    "checkout.session.async_payment_succeeded": _handle_checkout_completed,
    "charge.refunded": _handle_charge_refunded,
    "charge.dispute.created": _handle_dispute_created,
}


def stripe_event_handle(*, event_id: str) -> StripeEvent:
    """Run the handler of a stored event once (under its row lock) and record status and error."""
    with transaction.atomic():
        row = StripeEvent.objects.select_for_update().get(stripe_event_id=event_id)
        if row.status in DONE:
            return row
        handler = HANDLERS.get(row.type)
        if handler is None:
            row.status, row.error = StripeEventStatus.IGNORED, ""
        else:
            obj = ((row.payload or {}).get("data") or {}).get("object") or {}
            try:
                with transaction.atomic():
                    row.status, row.error = handler(obj), ""
            except ExoGraphError as exc:
                row.status, row.error = StripeEventStatus.FAILED, exc.message
                logger.warning("stripe event %s (%s) failed: %s", row.stripe_event_id, row.type, exc.code)
        row.save(update_fields=["status", "error", "modified"])
    return row
