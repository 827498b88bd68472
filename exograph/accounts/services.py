"""Account and API-key use cases: the one place that writes accounts and keys."""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
from dataclasses import dataclass

import redis
from django.conf import settings
from django.contrib.auth.password_validation import validate_password
from django.core.cache import cache
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.utils import timezone

from exograph.accounts.models import ApiKey, User
from exograph.core.errors import Conflict, NotFound, Unauthenticated, ValidationError

logger = logging.getLogger(__name__)

KEY_PREFIX_LEN = 12
MAX_ACTIVE_KEYS = 25


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


@transaction.atomic
def user_create(*, email: str, password: str | None) -> User:
    """Create an account with its signup credits. Raises Conflict if the email is taken, ValidationError on a weak password."""
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
    # The signup grant (BILLING_SIGNUP_CREDITS) is written in this same transaction.
    from billing.services import credits_grant_signup  # billing imports accounts: import here

    credits_grant_signup(account=user)
    return user


@dataclass(frozen=True)
class IssuedKey:
    key: ApiKey
    secret: str  # shown once, never stored


def api_key_create(*, actor: User, name: str) -> IssuedKey:
    """Issue a new API key for actor. The full secret is returned once and only its digest is stored."""
    name = name.strip()
    if not name:
        raise ValidationError(
            "A key needs a name.", code="invalid_name", hint="Name it after where you use it, e.g. 'laptop'."
        )
    if ApiKey.objects.filter(user=actor, revoked_at__isnull=True).count() >= MAX_ACTIVE_KEYS:
        raise Conflict(
            f"You already have {MAX_ACTIVE_KEYS} active keys.",
            code="too_many_keys",
            hint="Revoke a key you no longer use.",
        )
    prefix = secrets.token_hex(KEY_PREFIX_LEN // 2)
    secret_part = secrets.token_urlsafe(32)
    full = f"{settings.API_KEY_PREFIX}{prefix}_{secret_part}"
    key = ApiKey.objects.create(user=actor, name=name[:100], prefix=prefix, digest=_digest(full))
    return IssuedKey(key=key, secret=full)


def api_key_revoke(*, actor: User, key_id: int) -> ApiKey:
    """Revoke one of actor's keys; requests with it fail from now on. Raises NotFound for foreign or missing keys."""
    key = ApiKey.objects.filter(user=actor, id=key_id).first()
    if key is None:
        raise NotFound("No such API key.")
    if key.revoked_at is None:
        key.revoked_at = timezone.now()
        key.save(update_fields=["revoked_at", "modified"])
    return key


def api_key_authenticate(*, raw: str) -> ApiKey:
    """Resolve a presented secret to its active key. Raises Unauthenticated with the reason and the fix."""
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
    key = _api_key_lookup(prefix)
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
# auth together. Keys (with their user) are cached in Redis for a minute by their public
# prefix; the digest is still compared on every request. Any change to a key or its user
# (revocation, deactivation, deletion) drops the entries at once (accounts.receivers), so a
# revoked key stops working on the next request in every process.

API_KEY_CACHE_SECONDS = 60


def _api_key_cache_name(prefix: str) -> str:
    return f"apikey:v1:{prefix}"


def _api_key_cache_set(key: ApiKey) -> None:
    try:
        cache.set(_api_key_cache_name(key.prefix), key, API_KEY_CACHE_SECONDS)
    except redis.RedisError:
        logger.warning("API-key cache unavailable; authenticating from the database")


def _api_key_lookup(prefix: str) -> ApiKey | None:
    try:
        cached = cache.get(_api_key_cache_name(prefix))
    except redis.RedisError:
        cached = None
    if isinstance(cached, ApiKey):
        return cached
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
