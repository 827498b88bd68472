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
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import stripe
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from billing.models import CheckoutSession, EntryKind, StripeEvent, StripeEventStatus
from billing.services.ledger import credit_account_for, credits_grant, credits_remove_clamped
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


def checkout_session_create(*, actor: User, pack: str) -> CheckoutSession:
    """Create a Stripe Checkout Session for a credit pack; pay at its `url`. Credits come with the webhook.

    Raises ValidationError (unknown pack), ServiceUnavailable (Stripe off or unreachable), PermanentError.
    """
    chosen = pack_get(pack)
    if not settings.USE_STRIPE:
        raise _purchases_disabled()
    if settings.STRIPE_API_BASE:
        stripe.api_base = settings.STRIPE_API_BASE
    base = settings.EXOGRAPH_PUBLIC_URL.rstrip("/")
    account = credit_account_for(user=actor)
    # Called outside any transaction: never hold a database transaction open across Stripe.
    try:
        session = stripe.checkout.Session.create(
            api_key=settings.STRIPE_SECRET_KEY,
            mode="payment",
            line_items=[
                {
                    "quantity": 1,
                    "price_data": {
                        "currency": settings.STRIPE_CURRENCY,
                        "unit_amount": chosen["price"],
                        "product_data": {"name": f"{chosen['credits']:,} ExoGraph credits"},
                    },
                }
            ],
            client_reference_id=str(actor.pk),
            customer_email=actor.email,
            metadata={"user_id": str(actor.pk), "pack": pack, "credits": str(chosen["credits"])},
            success_url=f"{base}/billing/?checkout=success",
            cancel_url=f"{base}/billing/?checkout=cancelled",
        )
    except stripe.APIConnectionError as exc:
        raise ServiceUnavailable("Stripe is unreachable.", code="stripe_unavailable") from exc
    except stripe.StripeError as exc:
        logger.warning("stripe checkout failed for account %s: %s", actor.pk, type(exc).__name__)
        raise PermanentError(
            "Stripe refused to create the checkout session.", code="stripe_error", hint="Try again later."
        ) from exc
    return CheckoutSession.objects.create(
        stripe_session_id=str(session.id),
        account=account,
        pack=pack,
        credits=chosen["credits"],
        price=chosen["price"],
        currency=settings.STRIPE_CURRENCY,
        url=str(getattr(session, "url", "") or ""),
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
        stripe.Webhook.construct_event(
            payload, signature, settings.STRIPE_WEBHOOK_SECRET, tolerance=settings.STRIPE_WEBHOOK_TOLERANCE
        )
    except stripe.SignatureVerificationError as exc:
        raise ValidationError(
            "The Stripe signature does not verify (wrong secret, altered body or too old).",
            code="invalid_signature",
            hint="Check STRIPE_WEBHOOK_SECRET matches the endpoint's signing secret.",
        ) from exc
    except ValueError as exc:
        raise ValidationError("The webhook body is not a Stripe event.", code="invalid_payload") from exc
    data = json.loads(payload)  # verified: the signature covers these exact bytes
    if not isinstance(data, dict) or not data.get("id") or not data.get("type"):
        raise ValidationError("The webhook body is not a Stripe event.", code="invalid_payload")
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
    found = CheckoutSession.objects.select_for_update().filter(stripe_session_id=session_id).first()
    if found is not None:
        return found
    # Not in our table (e.g. our insert failed after Stripe answered): trust the metadata we set.
    metadata = obj.get("metadata") or {}
    user_id = str(metadata.get("user_id") or "")
    user = User.objects.filter(pk=int(user_id)).first() if user_id.isdigit() else None
    pack = metadata.get("pack")
    if user is None or pack not in settings.BILLING_PACKS:
        raise ValidationError(f"Checkout session {session_id} was not created by this server.", code="unknown_session")
    chosen = settings.BILLING_PACKS[pack]
    CheckoutSession.objects.get_or_create(
        stripe_session_id=session_id,
        defaults={
            "account": credit_account_for(user=user),
            "pack": pack,
            "credits": chosen["credits"],
            "price": chosen["price"],
            "currency": str(obj.get("currency") or settings.STRIPE_CURRENCY),
        },
    )
    return CheckoutSession.objects.select_for_update().get(stripe_session_id=session_id)


def _handle_checkout_completed(obj: dict[str, Any]) -> str:
    if obj.get("payment_status") not in ("paid", "no_payment_required"):
        return StripeEventStatus.IGNORED  # async payment methods: granted on async_payment_succeeded
    checkout = _session_for_completed(obj)
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
