"""The per-account rate limit: every authenticated API request of an account, whatever the key or the session,
counted against its plan's limits (settings.BILLING_PLANS) by the limiter in exograph.core.ratelimit.

Every authenticated DRF request passes `AccountRateThrottle` (DEFAULT_THROTTLE_CLASSES, after authentication);
`RateLimitHeadersMiddleware` (core's, re-exported here for the settings) copies the RateLimit-* headers onto the
response, allowed or refused. Redis down → 503.
"""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from rest_framework.throttling import BaseThrottle

from exograph.core.errors import RateLimited
from exograph.core.ratelimit import (
    DAY_MS,
    MINUTE_MS,
    RateLimitHeadersMiddleware,
    RatelimitRedisEvicts,
    RateLimitResult,
    address_throttle,
    ratelimit_redis_check,
    window_count,
    window_count_after_address_check,
)

__all__ = [
    "AccountRateThrottle",
    "RateLimitHeadersMiddleware",
    "RateLimitResult",
    "RatelimitRedisEvicts",
    "address_throttle",
    "plan_limits",
    "ratelimit_hit",
    "ratelimit_redis_check",
]

_plans: dict[int, tuple[str, float]] = {}
PLAN_CACHE_SECONDS = 60.0


def plan_limits(*, user_id: int) -> dict[str, int]:
    """The account's plan limits (the plan is cached in-process for a minute)."""
    now = time.monotonic()
    cached = _plans.get(user_id)
    if cached is None or cached[1] < now:
        from billing.models import CreditAccount

        plan = CreditAccount.objects.filter(user_id=user_id).values_list("plan", flat=True).first()
        cached = (plan or settings.BILLING_DEFAULT_PLAN, now + PLAN_CACHE_SECONDS)
        if len(_plans) > 50_000:  # bounded: drop everything rather than grow without end
            _plans.clear()
        _plans[user_id] = cached
    plans: dict[str, dict[str, int]] = settings.BILLING_PLANS
    return plans.get(cached[0]) or plans[settings.BILLING_DEFAULT_PLAN]


def ratelimit_hit(*, user_id: int, now_ms: int | None = None) -> RateLimitResult:
    """Count one request of an account (now_ms: the request's time; None: Redis's clock).

    Raises ServiceUnavailable (503) if Redis cannot be reached."""
    return window_count(**_account_windows(user_id=user_id), now_ms=now_ms)


def _account_windows(*, user_id: int) -> dict[str, Any]:
    """The account counter's key and windows (its plan's per-minute and per-day limits)."""
    limits = plan_limits(user_id=user_id)
    return {
        "key": f"rls:{{{user_id}}}",
        "short": (int(limits["per_minute"]), MINUTE_MS),
        "long": (int(limits["per_day"]), DAY_MS),
        "names": ("minute", "day"),
    }


class AccountRateThrottle(BaseThrottle):
    """Counts every authenticated API request of an account; unauthenticated requests are not counted.

    First of the default throttles, it also settles the failed-key check API-key authentication left on the request
    (exograph.core.ratelimit): the address looked at, and the account counted only if the address is within its
    limit, in one Redis round trip."""

    settles_address_check = True

    def allow_request(self, request: Any, view: Any) -> bool:
        user = getattr(request, "user", None)
        if user is None or not getattr(user, "is_authenticated", False):
            return True
        result = window_count_after_address_check(request, **_account_windows(user_id=user.pk))
        request._request.ratelimit = result
        if not result.allowed:
            raise RateLimited(
                f"Rate limit reached: {result.limit} requests per {result.window} for this account.",
                hint=f"Wait {result.retry_after} s (Retry-After) and retry; limits are per account, shared by all keys.",
                extra={"limit": result.limit, "retry_after": result.retry_after},
                headers=result.headers(),
            )
        return True
