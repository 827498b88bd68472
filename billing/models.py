"""Credits: one balance per account and an append-only ledger that always sums to it.

Amounts are whole credits (integers). `CreditAccount.balance` is what can be spent now;
`held` is what open holds reserve. Every change to either is one `CreditEntry` written in
the same transaction, so at all times

    balance == sum(entry.amount)        held == sum(entry.held_change)

and the database refuses a negative balance or hold (check constraints), whatever the code.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q

from exograph.core.models import TimeStampedModel


class EntryKind(models.TextChoices):
    SIGNUP_GRANT = "signup_grant", "Signup grant"
    PURCHASE = "purchase", "Purchase"
    CHARGE = "charge", "Charge"
    REFUND = "refund", "Refund"
    HOLD = "hold", "Hold"
    CAPTURE = "capture", "Capture"
    RELEASE = "release", "Release"
    EARNING = "earning", "Earning"
    ADMIN_ADJUST = "admin_adjust", "Admin adjustment"


class CreditAccount(TimeStampedModel):
    # When the account is deleted (accounts.services.account_delete) the ledger stays, detached: user becomes
    # NULL and anonymous_id, fixed at creation, is what names it from then on. No entry is rewritten.
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="credit_account"
    )
    anonymous_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    balance = models.BigIntegerField(default=0)
    held = models.BigIntegerField(default=0)
    plan = models.CharField(max_length=32, default="standard")

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(balance__gte=0), name="billing_account_balance_nonnegative"),
            models.CheckConstraint(condition=Q(held__gte=0), name="billing_account_held_nonnegative"),
        ]

    def __str__(self) -> str:
        owner = self.user if self.user_id is not None else f"deleted account {self.anonymous_id}"
        return f"{owner} ({self.balance} credits)"


class AppendOnlyError(Exception):
    pass


class CreditEntry(models.Model):
    """One change of a balance. Never updated, never deleted."""

    account = models.ForeignKey(CreditAccount, on_delete=models.PROTECT, related_name="entries")
    kind = models.CharField(max_length=16, choices=EntryKind.choices)
    # Change to the spendable balance (negative = spent or reserved).
    amount = models.BigIntegerField()
    balance_after = models.BigIntegerField()
    # Change to the held credits: hold +n, capture -n (spent from the hold), release -n.
    held_change = models.BigIntegerField(default=0)
    reference = models.CharField(max_length=500, blank=True, default="")
    idempotency_key = models.CharField(max_length=255, unique=True)
    hold = models.ForeignKey("Hold", null=True, blank=True, on_delete=models.PROTECT, related_name="entries")
    # Who caused it besides the account: the admin for adjustments, the querier for earnings.
    counterparty = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The API key whose request spent the credits (charges and holds), and the refund/release of such a
    # spend in the same calendar month: what a key's monthly cap counts (billing.services.caps). A plain
    # id, not a foreign key, so deleting a key never rewrites the append-only ledger.
    api_key_id = models.BigIntegerField(null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created", "-id"]
        verbose_name_plural = "credit entries"
        indexes = [
            models.Index(fields=["account", "-created"]),
            models.Index(fields=["account", "kind", "created"]),
            models.Index(
                fields=["api_key_id", "created"],
                name="billing_entry_key_month",
                condition=Q(api_key_id__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.amount:+d} → {self.balance_after}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None and not self._state.adding:
            raise AppendOnlyError("Credit entries are append-only.")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> Any:
        raise AppendOnlyError("Credit entries are append-only.")


class HoldStatus(models.TextChoices):
    OPEN = "open", "Open"
    CLOSED = "closed", "Closed"


class Hold(TimeStampedModel):
    """Credits reserved for long work (research): captured in parts, the rest released."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    account = models.ForeignKey(CreditAccount, on_delete=models.PROTECT, related_name="holds")
    amount = models.BigIntegerField()
    captured = models.BigIntegerField(default=0)
    released = models.BigIntegerField(default=0)
    status = models.CharField(max_length=8, choices=HoldStatus.choices, default=HoldStatus.OPEN)
    reference = models.CharField(max_length=500, blank=True, default="")
    idempotency_key = models.CharField(max_length=255, unique=True)
    last_activity_at = models.DateTimeField()

    class Meta:
        ordering = ["-created"]
        indexes = [models.Index(fields=["status", "last_activity_at"])]
        constraints = [
            models.CheckConstraint(
                condition=Q(amount__gt=0, captured__gte=0, released__gte=0)
                & Q(captured__lte=models.F("amount") - models.F("released")),
                name="billing_hold_amounts_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"hold {self.id} ({self.captured}/{self.amount}, {self.status})"

    @property
    def remaining(self) -> int:
        return int(self.amount - self.captured - self.released)


class CheckoutSession(TimeStampedModel):
    """A Stripe Checkout Session we created for a credit pack; credits are granted from its webhook."""

    stripe_session_id = models.CharField(max_length=255, unique=True)
    account = models.ForeignKey(CreditAccount, on_delete=models.PROTECT, related_name="checkout_sessions")
    pack = models.CharField(max_length=64)
    credits = models.BigIntegerField()
    price = models.BigIntegerField()
    currency = models.CharField(max_length=8)
    url = models.URLField(max_length=2000, blank=True, default="")
    payment_intent = models.CharField(max_length=255, blank=True, default="", db_index=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    # Credits taken back by refunds/disputes, and the part that could not be taken (already spent).
    credits_revoked = models.BigIntegerField(default=0)
    credits_shortfall = models.BigIntegerField(default=0)

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"{self.stripe_session_id} ({self.pack})"


class StripeEventStatus(models.TextChoices):
    RECEIVED = "received", "Received"
    PROCESSED = "processed", "Processed"
    IGNORED = "ignored", "Ignored"
    FAILED = "failed", "Failed"


class StripeEvent(TimeStampedModel):
    stripe_event_id = models.CharField(max_length=255, unique=True)
    type = models.CharField(max_length=100)
    payload = models.JSONField()
    status = models.CharField(max_length=16, choices=StripeEventStatus.choices, default=StripeEventStatus.RECEIVED)
    error = models.TextField(blank=True, default="")
    deliveries = models.PositiveIntegerField(default=1)

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"{self.stripe_event_id} {self.type} ({self.status})"


class IdempotencyStatus(models.TextChoices):
    IN_PROGRESS = "in_progress", "In progress"
    COMPLETE = "complete", "Complete"


class IdempotentRequest(TimeStampedModel):
    """The first response to a metered request per (account, Idempotency-Key, endpoint), replayed on retries."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    endpoint = models.CharField(max_length=100)
    status = models.CharField(max_length=16, choices=IdempotencyStatus.choices, default=IdempotencyStatus.IN_PROGRESS)
    # sha256 of (method, path, query, body) of the first request: a retry must be the same request.
    fingerprint = models.CharField(max_length=64, blank=True, default="")
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    # The rendered JSON, byte for byte, so a replay is verbatim (jsonb would reorder keys).
    response_body = models.TextField(blank=True, default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "key", "endpoint"], name="billing_idempotent_request_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.endpoint} {self.key} ({self.status})"


class UsageSource(models.TextChoices):
    SEARCH = "search", "Entity search"
    WORLD_ENTITY = "world_entity", "World Graph lookup"
    CHAT = "chat", "Chat"
    RESEARCH = "research", "Research"


class WorldUsage(TimeStampedModel):
    """One use of world knowledge contributed by other accounts; billing pays the contributors from it.

    Holds a keyed digest of what was asked, never its text (billing.services.earnings.query_digest),
    so no one reading billing rows learns what another account searched for.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    querier = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    query_digest = models.CharField(max_length=64)
    source = models.CharField(max_length=16, choices=UsageSource.choices)
    # Account ids of the contributors whose knowledge was returned (the querier excluded).
    contributor_ids = models.JSONField(default=list)
    paid_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]
        indexes = [models.Index(fields=["paid_at", "created"])]

    def __str__(self) -> str:
        return f"{self.source} by {self.querier_id} ({self.id})"
