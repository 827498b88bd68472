"""Account use cases: signup, email verification, password reset, login lockout, account deletion."""

from __future__ import annotations

import copy
import logging
from typing import Any

from django.contrib.auth.password_validation import validate_password
from django.core.cache import cache
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.encoding import force_str
from django.utils.http import urlsafe_base64_decode

from exograph.accounts.emails import email_verification_tokens
from exograph.accounts.hooks import email_verified
from exograph.accounts.lockout import login_username
from exograph.accounts.models import ApiKey, User
from exograph.accounts.tasks import user_email_verification_send_task, user_password_reset_send_task
from exograph.core.addresses import email_digest
from exograph.core.errors import (
    Conflict,
    PermissionDenied,
    RateLimited,
    ValidationError,
)
from exograph.core.ratelimit import address_throttle

logger = logging.getLogger(__name__)


@transaction.atomic
def user_create(*, email: str, password: str | None, email_verified: bool = False) -> User:
    """Create an account. Unverified (signup): emails the verification link after commit; the signup credits come with
    verification. email_verified=True (operators): verified now, credits granted now.

    Raises Conflict if the email is taken, ValidationError on a weak password.
    """
    email = User.objects.normalize_email(email.strip()).lower()
    if User.objects.filter(email__iexact=email).exists():
        raise Conflict("An account with this email already exists.", code="email_taken", hint="Log in instead.")
    user = User(email=email)
    if password is not None:
        try:
            validate_password(password, user)
        except DjangoValidationError as exc:
            raise ValidationError(
                " ".join(exc.messages), code="weak_password", hint="Choose a longer, less common password."
            ) from exc
        user.set_password(password)
    else:
        user.set_unusable_password()
    user.save()
    if email_verified:
        return user_email_mark_verified(user=user)
    _verification_email_queue(user.pk)
    return user


# --- Email verification ---------------------------------------------------------------
# Free credits go only to addresses that answer: the signup grant waits for the link.

VERIFICATION_RESEND_SECONDS = 60


def _verification_email_queue(user_id: int) -> None:
    # The broker down: the account exists and the banner offers to resend.
    _email_queue(user_email_verification_send_task, user_id, what="verification")


def _email_queue(task: Any, user_id: int, *, what: str) -> None:
    """Queue an account email after commit; a broker that is down is logged, never fails the request."""

    def send() -> None:
        try:
            task.delay(user_id)
        except Exception:
            logger.exception("could not queue the %s email of account %s", what, user_id)

    transaction.on_commit(send)


@transaction.atomic
def user_email_mark_verified(*, user: User) -> User:
    """Mark user's address verified; the signup credits come with it (accounts.hooks.email_verified, granted by the top
    layer). Both happen once, however often it is called."""
    locked = User.objects.select_for_update().get(pk=user.pk)
    if locked.email_verified_at is None:
        locked.email_verified_at = timezone.now()
        locked.save(update_fields=["email_verified_at"])
        logger.info("account %s verified its email", locked.pk)
    email_verified.send(sender=User, user=locked)  # the grant is once per account (its own idempotency key)
    user.email_verified_at = locked.email_verified_at
    return locked


def user_email_verify(*, uidb64: str, token: str) -> User:
    """Verify the address from the emailed link (see user_email_mark_verified). Raises ValidationError on a bad or
    expired link."""
    invalid = ValidationError(
        "This verification link is invalid or has expired.",
        code="invalid_verification_link",
        hint="Log in and ask for a new link from the banner at the top of the page.",
    )
    try:
        user_id = int(force_str(urlsafe_base64_decode(uidb64)))
    except (ValueError, TypeError, OverflowError):
        raise invalid from None
    user = User.objects.filter(pk=user_id, is_active=True).first()
    # The token is checked whatever the account's state: ids are sequential, so a link that skipped the check for
    # verified accounts would confirm to anyone which ids are verified (and, shown, their addresses).
    if user is None or not _verification_token_valid(user, token[:100]):
        raise invalid
    if user.email_verified:
        return user  # a second click, or a mail scanner before the person
    return user_email_mark_verified(user=user)


def _verification_token_valid(user: User, token: str) -> bool:
    """Links are made while the address is unverified; a verified account's own link still checks (it only
    confirms), as the account was when the link was sent."""
    as_sent = copy.copy(user)
    as_sent.email_verified_at = None
    return email_verification_tokens.check_token(as_sent, token)


def user_email_verification_request(*, actor: User) -> None:
    """Email actor a new verification link (after commit). Raises Conflict (already verified), RateLimited (once a
    minute)."""
    if actor.email_verified:
        raise Conflict("Your email address is already verified.", code="email_already_verified")
    if not cache.add(f"email-verify-sent:{actor.pk}", 1, timeout=VERIFICATION_RESEND_SECONDS):
        raise RateLimited(
            "A verification email was sent less than a minute ago.",
            code="verification_email_throttled",
            hint="Check your inbox and spam folder, or try again in a minute.",
            headers={"Retry-After": str(VERIFICATION_RESEND_SECONDS)},
        )
    _verification_email_queue(actor.pk)


# --- Password reset ----------------------------------------------------------------------
# Django's reset flow (exograph.accounts.views); the request side is here so the answer never depends on whether the
# address has an account: same page, same work in the request (the email goes from a task after commit).


def user_password_reset_request(*, email: str, client_address: str) -> None:
    """Email a reset link to the active account with this address, if there is one (after commit).

    Raises RateLimited when client_address asked too often (ANON_THROTTLES password_reset); past the limit of one
    email address (password_reset_email) it quietly sends nothing, so the answer still says nothing about the
    account. Raises ServiceUnavailable if the rate limiter's Redis is down.
    """
    address_throttle(action="password_reset", address=client_address)
    try:
        address_throttle(action="password_reset_email", address=email_digest(email))
    except RateLimited:
        logger.info("password reset: the mail limit of an address is reached; nothing sent")
        return
    user = User.objects.filter(email__iexact=email.strip(), is_active=True).first()
    if user is None or not user.has_usable_password():
        return
    _email_queue(user_password_reset_send_task, user.pk, what="password reset")  # broker down: they ask again


def user_login_lockout_clear(*, user: User) -> None:
    """Forget the failed logins naming user's address (django-axes), e.g. once a reset link set a new password."""
    from axes.utils import reset  # axes reads its settings on import

    reset(username=login_username(None, {"username": user.email}))


def account_delete(*, actor: User, user: User) -> None:
    """Delete user's account: keys revoked, then the user row, whose deletion takes its graphs (world contributions
    un-merged), holds (released) and ledger (detached, kept anonymised) with it: the top layer's pre_delete
    receivers (exograph.home.receivers); documents, chats and research go by the cascade.

    Raises PermissionDenied (someone else's or a platform account) and ServiceUnavailable (graph store down: nothing
    is deleted and the account is given back; retry).
    """
    if actor.pk != user.pk and not actor.is_superuser:
        raise PermissionDenied("You can delete only your own account.", code="forbidden")
    if user.is_platform:
        raise PermissionDenied(
            "Platform accounts own the World Graph and cannot be deleted.", code="platform_account_protected"
        )
    # Stop the account first: its keys and sessions are refused while the rest goes.
    was_active = user.is_active
    user.is_active = False
    user.save(update_fields=["is_active"])  # the receivers drop its cached keys
    user_id = user.pk
    try:
        with transaction.atomic():
            revoked = ApiKey.objects.filter(user=user, revoked_at__isnull=True).update(revoked_at=timezone.now())
            user.delete()  # cascades to its keys (the receivers forget them), documents and idempotency records
    except Exception:  # e.g. ServiceUnavailable: give the account back so its owner can retry
        if was_active:
            user.pk = user_id
            user.is_active = True
            user.save(update_fields=["is_active"])
        raise
    logger.info("account %s deleted by %s (%d keys revoked)", user_id, actor.pk, revoked)
