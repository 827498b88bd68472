"""API-key use cases: issue, change, revoke, and authenticate a presented secret (through the lookup cache)."""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.utils import timezone

from exograph.accounts.models import MAX_MONTHLY_CREDIT_CAP, ApiKey, User
from exograph.accounts.services.key_cache import _api_key_cache_set, _api_key_lookup
from exograph.core.errors import (
    Conflict,
    NotFound,
    PermissionDenied,
    Unauthenticated,
    ValidationError,
)

logger = logging.getLogger(__name__)

KEY_PREFIX_LEN = 12
MAX_ACTIVE_KEYS = 25


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


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
