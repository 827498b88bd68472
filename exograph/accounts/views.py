"""Web pages for accounts: the same services as the REST API. The dashboard they lead to (settings.LOGIN_REDIRECT_URL)
is the top layer's (exograph.home)."""

from __future__ import annotations

import contextlib
import math
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login, logout
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse_lazy
from django.views.decorators.http import require_POST

from exograph.accounts.connect import mcp_configs
from exograph.accounts.emails import password_reset_tokens
from exograph.accounts.forms import AccountDeleteForm, ApiKeyEditForm, ApiKeyForm, LoginForm, SignupForm
from exograph.accounts.hooks import readers
from exograph.accounts.selectors import api_key_list_for_user
from exograph.accounts.services import (
    account_delete,
    api_key_create,
    api_key_revoke,
    api_key_update,
    user_create,
    user_email_verification_request,
    user_email_verify,
    user_login_lockout_clear,
    user_password_reset_request,
)
from exograph.core.api import error_body
from exograph.core.errors import ExoGraphError, RateLimited
from exograph.core.proxies import client_ip
from exograph.core.ratelimit import address_throttle


class LoginView(auth_views.LoginView):
    """Web login. Failed attempts are counted and locked out by django-axes (see settings AXES_*)."""

    form_class = LoginForm
    template_name = "accounts/login.html"
    redirect_authenticated_user = True


def login_locked_out(request: HttpRequest, original_response: Any = None, credentials: Any = None) -> HttpResponse:
    """AXES_LOCKOUT_CALLABLE: 429 saying when to retry; the login page for browsers, the JSON envelope otherwise."""
    seconds = int(settings.AXES_COOLOFF_TIME.total_seconds())
    minutes = max(1, math.ceil(seconds / 60))
    message = (
        f"Too many failed login attempts for this account or from this address. "
        f"Try again in {minutes} minute{'s' if minutes != 1 else ''}."
    )
    hint = "Wait, then log in again; if you have forgotten your password, reset it from the login page."
    wants_json = request.path.startswith("/api/") or "application/json" in request.headers.get("Accept", "")
    if wants_json or request.headers.get("X-Requested-With") == "XMLHttpRequest":
        response: HttpResponse = JsonResponse(
            error_body("login_locked_out", message, hint, {"retry_after": seconds}), status=429
        )
    else:
        context = {"form": LoginForm(request), "throttled": message, "next": request.POST.get("next", "")}
        response = render(request, "accounts/login.html", context, status=429)
    response["Retry-After"] = str(seconds)
    return response


class LogoutView(auth_views.LogoutView):
    pass


class PasswordChangeView(auth_views.PasswordChangeView):
    template_name = "accounts/password_change.html"
    success_url = reverse_lazy(settings.LOGIN_REDIRECT_URL)

    def form_valid(self, form: Any) -> HttpResponse:
        messages.success(self.request, "Your password has been changed.")
        return super().form_valid(form)


class PasswordResetView(auth_views.PasswordResetView):
    """Ask for a reset link: the same answer whether or not the address has an account (the service decides)."""

    template_name = "accounts/password_reset.html"
    success_url = reverse_lazy("accounts:password_reset_done")

    def form_valid(self, form: Any) -> HttpResponse:
        try:
            user_password_reset_request(email=form.cleaned_data["email"], client_address=client_ip(self.request))
        except RateLimited as exc:
            response = self.render_to_response(self.get_context_data(form=form, throttled=exc.message), status=429)
            response.headers["Retry-After"] = exc.headers["Retry-After"]
            return response
        return redirect(self.success_url)


class PasswordResetDoneView(auth_views.PasswordResetDoneView):
    template_name = "accounts/password_reset_done.html"


class PasswordResetConfirmView(auth_views.PasswordResetConfirmView):
    """The emailed link: an expiring (ACCOUNTS_PASSWORD_RESET_SECONDS), one-use token; wrong links are counted per
    client address (ANON_THROTTLES email_link), like wrong verification links."""

    template_name = "accounts/password_reset_confirm.html"
    success_url = reverse_lazy("accounts:password_reset_complete")
    token_generator = password_reset_tokens

    def dispatch(self, *args: Any, **kwargs: Any) -> HttpResponseBase:
        address = client_ip(self.request)
        try:
            address_throttle(action="email_link", address=address, count=False)
        except RateLimited as exc:
            return _email_link_refused(self.request, exc, status=429)
        response = super().dispatch(*args, **kwargs)
        if not self.validlink and response.status_code == 200:  # the "invalid link" page, not the valid redirect
            with contextlib.suppress(RateLimited):
                address_throttle(action="email_link", address=address)
        return response

    def form_valid(self, form: Any) -> HttpResponse:
        response = super().form_valid(form)
        user_login_lockout_clear(user=form.user)  # the mailbox's owner chose a new password: guesses are moot
        return response


class PasswordResetCompleteView(auth_views.PasswordResetCompleteView):
    template_name = "accounts/password_reset_complete.html"


def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect(settings.LOGIN_REDIRECT_URL)
    if request.method == "POST":
        try:  # every attempt counts, per client address (anonymous: no account to throttle)
            address_throttle(action="signup", address=client_ip(request))
        except RateLimited as exc:
            response = render(
                request, "accounts/signup.html", {"form": SignupForm(), "throttled": exc.message}, status=429
            )
            response.headers["Retry-After"] = exc.headers["Retry-After"]
            return response
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            user = user_create(email=form.cleaned_data["email"], password=form.cleaned_data["password"])
        except ExoGraphError as exc:
            form.add_error(None, exc.message)
        else:
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            # No message here: the verification banner (accounts/_verify_banner.html) says where the link went.
            return redirect(settings.LOGIN_REDIRECT_URL)
    return render(request, "accounts/signup.html", {"form": form}, status=400 if form.errors else 200)


@login_required
def mcp_setup(request: HttpRequest) -> HttpResponse:
    return render(request, "accounts/mcp_setup.html", {"mcp": mcp_configs(request)})


@login_required
def api_keys(request: HttpRequest) -> HttpResponse:
    form = ApiKeyForm(request.POST or None)
    new_secret = None
    if request.method == "POST" and form.is_valid():
        try:
            issued = api_key_create(
                actor=request.user,  # type: ignore[arg-type]
                name=form.cleaned_data["name"],
                read_only=form.cleaned_data["read_only"],
                monthly_credit_cap=form.cleaned_data["monthly_credit_cap"],
            )
        except ExoGraphError as exc:
            form.add_error(None, exc.message)
        else:
            new_secret = issued.secret
            form = ApiKeyForm()
    keys = list(api_key_list_for_user(user=request.user))  # type: ignore[arg-type]
    spent = readers.key_spent_this_month(key_ids=[key.pk for key in keys])
    rows = [{"key": key, "spent": spent.get(key.pk, 0)} for key in keys]
    return render(request, "accounts/api_keys.html", {"form": form, "rows": rows, "new_secret": new_secret})


@login_required
@require_POST
def api_key_edit_view(request: HttpRequest, key_id: int) -> HttpResponse:
    """Change one key's permission and monthly cap (empty cap: none)."""
    form = ApiKeyEditForm(request.POST)
    if not form.is_valid():
        problems = "; ".join(
            f"{form.fields[name].label}: {' '.join(str(e) for e in errors)}" for name, errors in form.errors.items()
        )
        messages.error(request, f"Not saved. {problems}")
        return redirect("accounts:api_keys")
    try:
        key = api_key_update(
            actor=request.user,  # type: ignore[arg-type]
            key_id=key_id,
            read_only=form.cleaned_data["read_only"],
            monthly_credit_cap=form.cleaned_data["monthly_credit_cap"],
        )
    except ExoGraphError as exc:
        messages.error(request, exc.message)
    else:
        cap = f"capped at {key.monthly_credit_cap} credits a month" if key.monthly_credit_cap is not None else "no cap"
        messages.success(
            request, f"Key {key.display_prefix} saved: {'read-only' if key.read_only else 'full permission'}, {cap}."
        )
    return redirect("accounts:api_keys")


@login_required
@require_POST
def api_key_revoke_view(request: HttpRequest, key_id: int) -> HttpResponse:
    try:
        key = api_key_revoke(actor=request.user, key_id=key_id)  # type: ignore[arg-type]
    except ExoGraphError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Key {key.display_prefix} revoked.")
    return redirect("accounts:api_keys")


@login_required
def account_delete_view(request: HttpRequest) -> HttpResponse:
    """Delete my account, after the password: graphs and keys go, the credit ledger stays anonymised."""
    form = AccountDeleteForm(request.user, request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            account_delete(actor=request.user, user=request.user)  # type: ignore[arg-type]
        except ExoGraphError as exc:
            form.add_error(None, exc.message)
        else:
            logout(request)
            messages.success(request, "Your account has been deleted.")
            return redirect("accounts:login")
    return render(request, "accounts/account_delete.html", {"form": form}, status=400 if form.errors else 200)


def email_verify(request: HttpRequest, uidb64: str, token: str) -> HttpResponse:
    """The link from the verification email (idempotent: a second click just confirms). Wrong links are counted per
    client address; the page never shows the address (whoever holds a link may not be its owner)."""
    address = client_ip(request)
    try:
        address_throttle(action="email_link", address=address, count=False)
    except RateLimited as exc:
        return _email_link_refused(request, exc, status=429)
    try:
        user = user_email_verify(uidb64=uidb64, token=token)
    except ExoGraphError as exc:
        with contextlib.suppress(RateLimited):  # this wrong link counts; the answer is the same either way
            address_throttle(action="email_link", address=address)
        return _email_link_refused(request, exc, status=exc.status)
    credits = "Your free credits are in your account." if readers.signup_credits_received(user=user) else ""
    messages.success(request, f"Your email address is verified. {credits}".strip())
    return redirect(settings.LOGIN_REDIRECT_URL if request.user.is_authenticated else "accounts:login")


def _email_link_refused(request: HttpRequest, exc: ExoGraphError, *, status: int) -> HttpResponse:
    response = render(request, "accounts/email_verify.html", {"error": exc.message, "hint": exc.hint}, status=status)
    for name, value in exc.headers.items():
        response[name] = value
    return response


@login_required
@require_POST
def email_verification_resend(request: HttpRequest) -> HttpResponse:
    try:
        user_email_verification_request(actor=request.user)  # type: ignore[arg-type]
    except ExoGraphError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"We sent a new link to {request.user.email}.")  # type: ignore[union-attr]
    return redirect(settings.LOGIN_REDIRECT_URL)
