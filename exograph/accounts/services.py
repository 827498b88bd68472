"""Account and API-key use cases: the one place that writes accounts and keys."""

from __future__ import annotations

import copy
import hashlib
import hmac
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import redis
from django.conf import settings
from django.contrib.auth.password_validation import validate_password
from django.core.cache import cache
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import models, router, transaction
from django.utils import timezone
from django.utils.encoding import force_str
from django.utils.http import urlsafe_base64_decode

from exograph.accounts.emails import email_verification_tokens
from exograph.accounts.hooks import email_verified
from exograph.accounts.lockout import login_username
from exograph.accounts.models import MAX_MONTHLY_CREDIT_CAP, ApiKey, User
from exograph.accounts.tasks import user_email_verification_send_task, user_password_reset_send_task
from exograph.core.addresses import email_digest
from exograph.core.errors import (
    Conflict,
    NotFound,
    PermissionDenied,
    RateLimited,
    Unauthenticated,
    ValidationError,
)
from exograph.core.ratelimit import address_throttle

logger = logging.getLogger(__name__)

M = TypeVar("M", bound=models.Model)

KEY_PREFIX_LEN = 12
MAX_ACTIVE_KEYS = 25


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


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


@dataclass(frozen=True)
class IssuedKey:
    key: ApiKey
    secret: str  # shown once, never stored


class _Unset:
    """No change (PATCH without the field); distinct from None, which removes a cap."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()


def _check_name(name: str) -> str:
    name = name.strip()
    if not name:
        raise ValidationError(
            "A key needs a name.", code="invalid_name", hint="Name it after where you use it, e.g. 'laptop'."
        )
    return name[:100]


def _check_cap(cap: object) -> int | None:
    if cap is None:
        return None
    if isinstance(cap, bool) or not isinstance(cap, int) or not 0 <= cap <= MAX_MONTHLY_CREDIT_CAP:
        raise ValidationError(
            f"monthly_credit_cap must be a whole number of credits from 0 to {MAX_MONTHLY_CREDIT_CAP:,}, or null "
            f"for no cap; got {str(cap)[:20]!r}.",
            code="invalid_monthly_credit_cap",
            hint="e.g. 500 for at most 500 credits per calendar month (UTC).",
        )
    return cap


def _check_acting_key(acting_key: ApiKey | None, *, doing: str) -> None:
    """A restricted key may not manage keys: it could issue itself an unrestricted one."""
    if acting_key is not None and acting_key.is_restricted:
        limits = " and ".join(
            part
            for part in (
                "read-only" if acting_key.read_only else "",
                f"capped at {acting_key.monthly_credit_cap} credits a month"
                if acting_key.monthly_credit_cap is not None
                else "",
            )
            if part
        )
        raise PermissionDenied(
            f"This API key ({acting_key.display_prefix}) is {limits}, so it may not {doing} API keys.",
            code="key_restricted",
            hint="Manage keys on the API keys page, or with a key with full permission and no cap.",
            extra={"key_permission": acting_key.permission},
        )


def api_key_create(
    *,
    actor: User,
    name: str,
    read_only: bool = False,
    monthly_credit_cap: int | None = None,
    acting_key: ApiKey | None = None,
) -> IssuedKey:
    """Issue a new API key for actor. The full secret is returned once and only its digest is stored.

    read_only: the key may only read (search, explore, list); monthly_credit_cap: what requests made with it
    may spend per calendar month (UTC), None for no cap. acting_key: the key of the request asking, if any
    (a restricted key may not create keys: PermissionDenied key_restricted).
    """
    _check_acting_key(acting_key, doing="create")
    name = _check_name(name)
    cap = _check_cap(monthly_credit_cap)
    if ApiKey.objects.filter(user=actor, revoked_at__isnull=True).count() >= MAX_ACTIVE_KEYS:
        raise Conflict(
            f"You already have {MAX_ACTIVE_KEYS} active keys.",
            code="too_many_keys",
            hint="Revoke a key you no longer use.",
        )
    prefix = secrets.token_hex(KEY_PREFIX_LEN // 2)
    secret_part = secrets.token_urlsafe(32)
    full = f"{settings.API_KEY_PREFIX}{prefix}_{secret_part}"
    key = ApiKey.objects.create(
        user=actor,
        name=name,
        prefix=prefix,
        digest=_digest(full),
        read_only=bool(read_only),
        monthly_credit_cap=cap,
    )
    logger.info("api key %s created for %s (read_only=%s, cap=%s)", key.pk, actor.pk, key.read_only, cap)
    return IssuedKey(key=key, secret=full)


def api_key_update(
    *,
    actor: User,
    key_id: int,
    name: str = UNSET,
    read_only: bool = UNSET,
    monthly_credit_cap: int | None = UNSET,
    acting_key: ApiKey | None = None,
) -> ApiKey:
    """Rename a key or change its permission or monthly cap (None removes the cap); the change applies to the
    key's next request. Raises NotFound (foreign, missing), ValidationError, PermissionDenied (key_restricted:
    a restricted acting key) and Conflict (a revoked key)."""
    _check_acting_key(acting_key, doing="change")
    key = ApiKey.objects.filter(user=actor, id=key_id).first()
    if key is None:
        raise NotFound("No such API key.", hint="List your keys with GET /api/v1/keys/.")
    if key.revoked_at is not None:
        raise Conflict("This API key is revoked.", code="key_revoked", hint="Create a new key instead.")
    changed = []
    if name is not UNSET:
        key.name = _check_name(name)
        changed.append("name")
    if read_only is not UNSET:
        key.read_only = bool(read_only)
        changed.append("read_only")
    if monthly_credit_cap is not UNSET:
        key.monthly_credit_cap = _check_cap(monthly_credit_cap)
        changed.append("monthly_credit_cap")
    if changed:
        key.save(update_fields=[*changed, "modified"])  # the receivers drop the cached key
        logger.info("api key %s changed (%s)", key.pk, ", ".join(changed))
    return key


def api_key_revoke(*, actor: User, key_id: int, acting_key: ApiKey | None = None) -> ApiKey:
    """Revoke one of actor's keys; requests with it fail from now on. Raises NotFound for foreign or missing keys,
    PermissionDenied (key_restricted) when asked by a restricted key."""
    _check_acting_key(acting_key, doing="revoke")
    key = ApiKey.objects.filter(user=actor, id=key_id).first()
    if key is None:
        raise NotFound("No such API key.")
    if key.revoked_at is None:
        key.revoked_at = timezone.now()
        key.save(update_fields=["revoked_at", "modified"])
    return key


def api_key_authenticate(*, raw: str, before_database: Callable[[], None] | None = None) -> ApiKey:
    """Resolve a presented secret to its active key. Raises Unauthenticated with the reason and the fix.

    before_database: called before the key is looked up in the database (not found in the lookup cache); what it
    raises, the lookup raises (the failed-key address check: a guesser over its limit never reaches the database)."""
    raw = raw.strip()
    expected = settings.API_KEY_PREFIX
    if not raw.startswith(expected):
        raise Unauthenticated(
            f"This is not an ExoGraph API key; keys start with '{expected}'.",
            code="invalid_api_key",
            hint="Copy the whole key shown when you created it, or create a new one on the API keys page.",
        )
    body = raw[len(expected) :]
    prefix, sep, secret_part = (
        body[:KEY_PREFIX_LEN],
        body[KEY_PREFIX_LEN : KEY_PREFIX_LEN + 1],
        body[KEY_PREFIX_LEN + 1 :],
    )
    if sep != "_" or not secret_part or len(raw) > 200:
        raise Unauthenticated(
            "The API key is malformed (truncated or with extra characters).",
            code="invalid_api_key",
            hint="Copy the whole key shown when you created it, or create a new one on the API keys page.",
        )
    key = _api_key_lookup(prefix, before_database=before_database)
    if key is None or not hmac.compare_digest(key.digest, _digest(raw)):
        raise Unauthenticated(
            "Unknown API key.", code="invalid_api_key", hint="Check the key, or create a new one on the API keys page."
        )
    if key.revoked_at is not None:
        raise Unauthenticated(
            "This API key has been revoked.", code="revoked_api_key", hint="Create a new key on the API keys page."
        )
    if not key.user.is_active:
        raise Unauthenticated("This account is disabled.", code="account_disabled", hint="Contact support.")
    now = timezone.now()
    # Record use at most once a minute: a write per request would serialise hot keys.
    if key.last_used_at is None or (now - key.last_used_at).total_seconds() > 60:
        ApiKey.objects.filter(id=key.id).update(last_used_at=now)
        key.last_used_at = now
        _api_key_cache_set(key)
    return key


# --- API-key lookup cache -----------------------------------------------------------------
# Every API request authenticates; the ORM lookup of key + user costs more than the rest of
# auth together. What authentication needs of a key and its user is cached in Redis for a
# minute by the key's public prefix, as a small dict of builtin values: never the model
# instances, so no password hash, email or other account data lands in Redis. The digest is
# still compared on every request. Any change to a key or its user (revocation,
# deactivation, deletion) drops the entries at once (accounts.receivers), so a revoked key
# stops working on the next request in every process.

API_KEY_CACHE_SECONDS = 60
_CACHE_VERSION = 3
_CACHED_KEY_FIELDS = (
    "id", "user_id", "name", "prefix", "digest", "read_only", "monthly_credit_cap", "last_used_at", "revoked_at",
)  # fmt: skip
_CACHED_USER_FIELDS = ("id", "is_active", "is_staff", "is_superuser", "is_platform")


def _api_key_cache_name(prefix: str) -> str:
    return f"apikey:v{_CACHE_VERSION}:{prefix}"


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _api_key_cache_entry(key: ApiKey) -> dict[str, Any]:
    user = key.user
    return {
        "v": _CACHE_VERSION,
        "key": {
            "id": key.id,
            "user_id": key.user_id,
            "name": key.name,
            "prefix": key.prefix,
            "digest": key.digest,
            "read_only": key.read_only,
            "monthly_credit_cap": key.monthly_credit_cap,
            "last_used_at": _iso(key.last_used_at),
            "revoked_at": _iso(key.revoked_at),
        },
        "user": {name: getattr(user, name) for name in _CACHED_USER_FIELDS},
    }


def _partial_instance(model: type[M], values: dict[str, Any]) -> M:
    """A model instance as loaded with only these fields; the others are deferred (read on first access)."""
    names = [f.attname for f in model._meta.concrete_fields if f.attname in values]
    return model.from_db(router.db_for_read(model), names, [values[name] for name in names])


def _api_key_from_entry(entry: object) -> ApiKey | None:
    """Rebuild the key and its user from a cache entry (None if it is not one of ours)."""
    if not isinstance(entry, dict) or entry.get("v") != _CACHE_VERSION:
        return None
    try:
        key_values = {name: entry["key"][name] for name in _CACHED_KEY_FIELDS}
        user_values = {name: entry["user"][name] for name in _CACHED_USER_FIELDS}
        for name in ("last_used_at", "revoked_at"):
            if key_values[name] is not None:
                key_values[name] = datetime.fromisoformat(key_values[name])
    except (KeyError, TypeError, ValueError):
        return None
    key = _partial_instance(ApiKey, key_values)
    # save() of a partly loaded instance writes only its loaded fields, never a blank password.
    key.user = _partial_instance(User, user_values)
    return key


def _api_key_cache_set(key: ApiKey) -> None:
    try:
        cache.set(_api_key_cache_name(key.prefix), _api_key_cache_entry(key), API_KEY_CACHE_SECONDS)
    except redis.RedisError:
        logger.warning("API-key cache unavailable; authenticating from the database")


def _api_key_lookup(prefix: str, *, before_database: Callable[[], None] | None = None) -> ApiKey | None:
    try:
        cached = _api_key_from_entry(cache.get(_api_key_cache_name(prefix)))
    except redis.RedisError:
        cached = None
    if cached is not None:
        return cached
    if before_database is not None:
        before_database()
    key = ApiKey.objects.select_related("user").filter(prefix=prefix).first()
    if key is not None:
        _api_key_cache_set(key)
    return key


def api_key_cache_forget(*, prefixes: list[str]) -> None:
    """Drop cached keys so the next request reads them from the database."""
    if not prefixes:
        return
    try:
        cache.delete_many([_api_key_cache_name(p) for p in prefixes])
    except redis.RedisError:
        logger.warning("API-key cache unavailable; %d entries expire on their own", len(prefixes))
