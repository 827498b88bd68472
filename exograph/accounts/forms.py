from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.forms import AuthenticationForm

from exograph.accounts.models import MAX_MONTHLY_CREDIT_CAP


class SignupForm(forms.Form):
    email = forms.EmailField(
        max_length=254, widget=forms.EmailInput(attrs={"autocomplete": "email", "autofocus": True})
    )
    password = forms.CharField(widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}))
    password_confirm = forms.CharField(
        label="Confirm password", widget=forms.PasswordInput(attrs={"autocomplete": "new-password"})
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("password") and data.get("password") != data.get("password_confirm"):
            self.add_error("password_confirm", "The two passwords differ.")
        return data


class LoginForm(AuthenticationForm):
    username = forms.EmailField(
        label="Email", widget=forms.EmailInput(attrs={"autocomplete": "email", "autofocus": True})
    )


class ApiKeyForm(forms.Form):
    name = forms.CharField(max_length=100, widget=forms.TextInput(attrs={"placeholder": "e.g. claude-desktop"}))
    read_only = forms.BooleanField(
        required=False, label="Read-only", help_text="Search, explore and list only: no uploads, chat or research."
    )
    monthly_credit_cap = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=MAX_MONTHLY_CREDIT_CAP,
        label="Monthly credit cap",
        help_text="Most credits this key may spend per calendar month (UTC). Empty: no cap.",
        widget=forms.NumberInput(attrs={"placeholder": "no cap", "inputmode": "numeric"}),
    )


class ApiKeyEditForm(forms.Form):
    """One key's permission and cap (the row form of the API keys page)."""

    read_only = forms.BooleanField(required=False, label="Read-only")
    monthly_credit_cap = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=MAX_MONTHLY_CREDIT_CAP,
        label="Monthly cap",
        widget=forms.NumberInput(attrs={"placeholder": "no cap", "inputmode": "numeric"}),
    )


class AccountDeleteForm(forms.Form):
    password = forms.CharField(
        label="Your password",
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
        help_text="Deleting cannot be undone.",
    )

    def __init__(self, user: Any, *args: Any, **kwargs: Any) -> None:
        self.user = user
        super().__init__(*args, **kwargs)

    def clean_password(self) -> str:
        password = str(self.cleaned_data["password"])
        if not self.user.check_password(password):
            raise forms.ValidationError("The password is not correct.")
        return password
