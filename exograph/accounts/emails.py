"""Account emails, sent through Django's email backend (SMTP in production, the console in the embedded default)."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.tokens import PasswordResetTokenGenerator
from django.core.mail import send_mail
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import base36_to_int, urlsafe_base64_encode

from exograph.accounts.hooks import readers
from exograph.accounts.models import User


class EmailVerificationTokenGenerator(PasswordResetTokenGenerator):
    """Signed, expiring (PASSWORD_RESET_TIMEOUT) links bound to the address: a new email voids them. Made while the
    address is unverified; once it is, its own link still checks but only confirms (services.user_email_verify)."""

    key_salt = "exograph.accounts.emails.EmailVerificationTokenGenerator"

    def _make_hash_value(self, user: User, timestamp: int) -> str:  # type: ignore[override]
        return f"{user.pk}:{user.email}:{user.email_verified_at}:{timestamp}"


email_verification_tokens = EmailVerificationTokenGenerator()


def email_verification_link(*, user: User) -> str:
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    token = email_verification_tokens.make_token(user)
    path = reverse("accounts:email_verify", kwargs={"uidb64": uid, "token": token})
    return f"{settings.EXOGRAPH_PUBLIC_URL.rstrip('/')}{path}"


def email_verification_send(*, user: User) -> None:
    """Send user the link that verifies their address. Raises smtplib/OSError errors of the backend."""
    # Free credits come once per address (billing.credits_grant_signup): a re-signup is not promised them.
    credits = readers.signup_credits_offered(user=user)
    grant = f" and your {credits} free credits are added to your account" if credits > 0 else ""
    send_mail(
        subject="Confirm your ExoGraph email address",
        message=(
            f"Open this link to confirm {user.email}{grant}:\n\n"
            f"{email_verification_link(user=user)}\n\n"
            "The link works for a few days. If you did not sign up for ExoGraph, ignore this email.\n"
        ),
        from_email=None,
        recipient_list=[user.email],
    )


class PasswordResetTokens(PasswordResetTokenGenerator):
    """Django's reset tokens (bound to the password hash, the last login and the address: setting a password or
    logging in spends them), for ACCOUNTS_PASSWORD_RESET_SECONDS rather than the verification links' days."""

    key_salt = "exograph.accounts.emails.PasswordResetTokens"

    def check_token(self, user: User | None, token: str | None) -> bool:  # type: ignore[override]
        if not super().check_token(user, token) or token is None:
            return False
        try:
            issued = base36_to_int(token.split("-", 1)[0])
        except ValueError:
            return False
        return self._num_seconds(self._now()) - issued <= settings.ACCOUNTS_PASSWORD_RESET_SECONDS


password_reset_tokens = PasswordResetTokens()


def password_reset_send(*, user: User) -> None:
    """Send user a link to choose a new password. Raises smtplib/OSError errors of the backend."""
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    path = reverse(
        "accounts:password_reset_confirm", kwargs={"uidb64": uid, "token": password_reset_tokens.make_token(user)}
    )
    minutes = settings.ACCOUNTS_PASSWORD_RESET_SECONDS // 60
    send_mail(
        subject="Reset your ExoGraph password",
        message=(
            f"Someone asked to reset the password of the ExoGraph account of {user.email}. "
            "Open this link to choose a new one:\n\n"
            f"{settings.EXOGRAPH_PUBLIC_URL.rstrip('/')}{path}\n\n"
            f"The link works once, for {minutes} minutes. If you did not ask, ignore this email: "
            "your password stays as it is.\n"
        ),
        from_email=None,
        recipient_list=[user.email],
    )
