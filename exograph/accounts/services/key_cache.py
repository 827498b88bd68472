"""The API-key lookup cache: what authentication needs of a key and its user, in Redis for a minute."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

import redis
from django.core.cache import cache
from django.db import models, router

from exograph.accounts.models import ApiKey, User

logger = logging.getLogger(__name__)

M = TypeVar("M", bound=models.Model)

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
