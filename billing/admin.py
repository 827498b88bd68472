"""Django admin: balances (read-only) and adjustments, which are ledger entries made by credits_grant_admin."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import HttpRequest

from billing.models import CheckoutSession, CreditAccount, CreditEntry, Hold, StripeEvent
from billing.services import credit_balance, credits_grant_admin
from exograph.accounts.models import User
from exograph.core.errors import ExoGraphError


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(CreditAccount)
class CreditAccountAdmin(ReadOnlyAdmin):
    list_display = ["user", "balance", "held", "plan", "modified"]
    search_fields = ["user__email"]
    list_filter = ["plan"]


class AdjustmentForm(forms.ModelForm):
    user = forms.ModelChoiceField(queryset=User.objects.order_by("email"), label="Account")
    amount = forms.IntegerField(help_text="Credits: positive adds, negative removes (never below zero).")
    note = forms.CharField(max_length=300, help_text="Why; kept in the ledger.")

    class Meta:
        model = CreditEntry
        fields: list[str] = []

    def clean_amount(self) -> int:
        amount = int(self.cleaned_data["amount"])
        if amount == 0:
            raise DjangoValidationError("An adjustment must not be zero.")
        return amount

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        user, amount = data.get("user"), data.get("amount")
        if user is not None and amount is not None and amount < 0:
            balance = credit_balance(account=user)
            if -amount > balance:
                raise DjangoValidationError(f"The balance is {balance}; remove at most {balance}.")
        return data


@admin.register(CreditEntry)
class CreditEntryAdmin(admin.ModelAdmin):
    """The ledger. Adding here makes an admin adjustment; entries are never changed or deleted."""

    list_display = ["created", "account", "kind", "amount", "held_change", "balance_after", "reference"]
    list_filter = ["kind"]
    search_fields = ["account__user__email", "reference", "idempotency_key"]
    date_hierarchy = "created"

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        if obj is None:
            kwargs["form"] = AdjustmentForm
            kwargs["fields"] = ["user", "amount", "note"]
        return super().get_form(request, obj, change, **kwargs)

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None:
            return ["user", "amount", "note"]
        return super().get_fields(request, obj)

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        try:
            entry = credits_grant_admin(
                account=form.cleaned_data["user"],
                amount=form.cleaned_data["amount"],
                actor=request.user,  # type: ignore[arg-type]
                note=form.cleaned_data["note"],
            )
        except ExoGraphError as exc:  # a race with a concurrent spend; the form checked the balance
            self.message_user(request, f"{exc.message} {exc.hint}".strip(), level=messages.ERROR)
            raise
        obj.__dict__.update({k: v for k, v in entry.__dict__.items() if k != "_state"})
        obj._state.adding = False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Hold)
class HoldAdmin(ReadOnlyAdmin):
    list_display = ["id", "account", "amount", "captured", "released", "status", "last_activity_at"]
    list_filter = ["status"]
    search_fields = ["account__user__email", "reference"]


@admin.register(CheckoutSession)
class CheckoutSessionAdmin(ReadOnlyAdmin):
    list_display = ["stripe_session_id", "account", "pack", "credits", "completed_at", "credits_revoked"]
    search_fields = ["stripe_session_id", "account__user__email", "payment_intent"]


@admin.register(StripeEvent)
class StripeEventAdmin(ReadOnlyAdmin):
    list_display = ["stripe_event_id", "type", "status", "deliveries", "created"]
    list_filter = ["status", "type"]
    search_fields = ["stripe_event_id"]
