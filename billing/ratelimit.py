"""Per-account rate limits, counted atomically in Redis by one Lua script.

Windows: fixed windows anchored at the account's first counted request (a minute window
and a day window; each starts with the first request after the previous one expired).
The script reads both counters, refuses without counting when either is spent, otherwise
increments both and sets their expiry, all in one atomic step, so 200 concurrent requests
get exactly `per_minute` yeses. Refused requests are not counted.

Every authenticated DRF request passes `AccountRateThrottle` (DEFAULT_THROTTLE_CLASSES,
after authentication), whatever the key or the session; `RateLimitHeadersMiddleware`
copies the RateLimit-* headers onto the response, allowed or refused. Redis down → 503.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import redis
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from rest_framework.throttling import BaseThrottle

from exograph.core.errors import RateLimited, ServiceUnavailable

_SCRIPT = """
local lmin, lday = tonumber(ARGV[1]), tonumber(ARGV[2])
local wmin, wday = tonumber(ARGV[3]), tonumber(ARGV[4])
local cmin = tonumber(redis.call('GET', KEYS[1]) or '0')
local cday = tonumber(redis.call('GET', KEYS[2]) or '0')
local allowed = 0
if cmin < lmin and cday < lday then
  allowed = 1
  cmin = redis.call('INCR', KEYS[1])
  cday = redis.call('INCR', KEYS[2])
end
local tmin = redis.call('PTTL', KEYS[1])
if allowed == 1 and tmin < 0 then redis.call('PEXPIRE', KEYS[1], wmin); tmin = wmin end
local tday = redis.call('PTTL', KEYS[2])
if allowed == 1 and tday < 0 then redis.call('PEXPIRE', KEYS[2], wday); tday = wday end
return {allowed, cmin, cday, tmin, tday}
"""

MINUTE_MS = 60_000
DAY_MS = 86_400_000

_clients: dict[str, tuple[redis.Redis, Any]] = {}
_clients_lock = threading.Lock()
_plans: dict[int, tuple[str, float]] = {}
PLAN_CACHE_SECONDS = 60.0


def _script() -> Any:
    url = settings.RATELIMIT_REDIS_URL
    found = _clients.get(url)
    if found is None:
        with _clients_lock:
            found = _clients.get(url)
            if found is None:
                timeout = settings.BILLING_RATELIMIT_TIMEOUT
                client = redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)
                found = (client, client.register_script(_SCRIPT))
                _clients[url] = found
    return found[1]


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


@dataclass(frozen=True)
class RateLimitResult:
    allowed: bool
    limit: int
    remaining: int
    reset: int  # seconds until the binding window ends
    retry_after: int
    policy: str
    window: str  # "minute" or "day": the window the figures describe

    def headers(self) -> dict[str, str]:
        headers = {
            "RateLimit-Limit": str(self.limit),
            "RateLimit-Remaining": str(self.remaining),
            "RateLimit-Reset": str(self.reset),
            "RateLimit-Policy": self.policy,
        }
        if not self.allowed:
            headers["Retry-After"] = str(self.retry_after)
        return headers


def _seconds(ms: int, window_ms: int) -> int:
    return max(1, math.ceil((ms if ms >= 0 else window_ms) / 1000))


def ratelimit_hit(*, user_id: int) -> RateLimitResult:
    """Count one request of an account. Raises ServiceUnavailable (503) if Redis cannot be reached."""
    limits = plan_limits(user_id=user_id)
    per_minute, per_day = int(limits["per_minute"]), int(limits["per_day"])
    prefix = f"rl:{{{user_id}}}"
    try:
        allowed, cmin, cday, tmin, tday = _script()(
            keys=[f"{prefix}:m", f"{prefix}:d"], args=[per_minute, per_day, MINUTE_MS, DAY_MS]
        )
    except redis.RedisError as exc:
        raise ServiceUnavailable(
            "The rate limiter's Redis is unreachable, so requests cannot be counted.",
            code="ratelimit_unavailable",
            hint="This is on our side (Redis is down); retry in a moment.",
        ) from exc
    reset_min, reset_day = _seconds(int(tmin), MINUTE_MS), _seconds(int(tday), DAY_MS)
    left_min, left_day = max(0, per_minute - int(cmin)), max(0, per_day - int(cday))
    policy = f"{per_minute};w=60, {per_day};w=86400"
    minute_binds = left_min <= left_day
    if allowed:
        if minute_binds:
            return RateLimitResult(True, per_minute, left_min, reset_min, 0, policy, "minute")
        return RateLimitResult(True, per_day, left_day, reset_day, 0, policy, "day")
    retry = max(reset_min if left_min == 0 else 0, reset_day if left_day == 0 else 0)
    if left_day == 0:
        return RateLimitResult(False, per_day, 0, reset_day, retry, policy, "day")
    return RateLimitResult(False, per_minute, 0, reset_min, retry, policy, "minute")


class AccountRateThrottle(BaseThrottle):
    """Counts every authenticated API request of an account; unauthenticated requests are not counted."""

    def allow_request(self, request: Any, view: Any) -> bool:
        user = getattr(request, "user", None)
        if user is None or not getattr(user, "is_authenticated", False):
            return True
        result = ratelimit_hit(user_id=user.pk)
        request._request.ratelimit = result
        if not result.allowed:
            raise RateLimited(
                f"Rate limit reached: {result.limit} requests per {result.window} for this account.",
                hint=f"Wait {result.retry_after} s (Retry-After) and retry; limits are per account, shared by all keys.",
                extra={"limit": result.limit, "retry_after": result.retry_after},
                headers=result.headers(),
            )
        return True


class RateLimitHeadersMiddleware:
    """Copies the RateLimit-* headers the throttle computed onto the response."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        result = getattr(request, "ratelimit", None)
        if isinstance(result, RateLimitResult):
            for name, value in result.headers().items():
                response.headers[name] = value
        return response
