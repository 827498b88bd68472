"""Rate limits, counted atomically in Redis by one Lua script: the limiter every layer uses (per account in
billing.ratelimit, per client address here for anonymous endpoints: signup, failed API keys, emailed links).

Sliding windows, so no window edge lets more through than the limit: the short window (a
minute for accounts) is an exact log of the requests of the last 60 s, the day window counts
requests in one-minute buckets, and a bucket counts until its latest request is more than a
day old (exact or slightly stricter, never looser). In any 60 s at most `per_minute` requests
pass and in any 24 h at most `per_day`. The script prunes, reads both windows, refuses without
counting when either is spent, otherwise counts in both, all in one atomic step, so 200
concurrent requests get exactly `per_minute` yeses. Refused requests are not counted.

RateLimit-Remaining is what is left in the binding window now; RateLimit-Reset and
Retry-After are the seconds until its oldest counted request leaves the window (a slot frees).

The counters must never be evicted (an evicted counter is a fresh limit): RATELIMIT_REDIS_URL
must point at a Redis with `maxmemory-policy noeviction` (the default); /readyz fails otherwise
(`ratelimit_redis_check`). `RateLimitHeadersMiddleware` copies the RateLimit-* headers a limiter
left on the request onto the response, allowed or refused. Redis down → 503.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import redis
from django.conf import settings
from django.http import HttpRequest, HttpResponse

from exograph.core.errors import RateLimited, ServiceUnavailable
from exograph.core.stores import shares_graph_store, store_unavailable

# KEYS[1]: the short window's log (sorted set: member per request, score = its time in ms).
# KEYS[2]: the long window's buckets (sorted set: member = bucket start, score = its latest request).
# KEYS[3]: the long window's counts (hash: bucket start -> count, 'total', 'seq' for unique members).
# ARGV: short limit, short window ms, long limit, long window ms, bucket ms, now ms (0: Redis's
# clock), count (1) or only look (0).
_SCRIPT = """
local lshort, wshort = tonumber(ARGV[1]), tonumber(ARGV[2])
local llong, wlong, bms = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local now, count = tonumber(ARGV[6]), ARGV[7] == '1'
if now <= 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - wshort)
local cshort = redis.call('ZCARD', KEYS[1])
local total = tonumber(redis.call('HGET', KEYS[3], 'total') or '0')
local old = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now - wlong)
if #old > 0 then
  for _, bucket in ipairs(old) do
    total = total - tonumber(redis.call('HGET', KEYS[3], bucket) or '0')
  end
  redis.call('HDEL', KEYS[3], unpack(old))
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - wlong)
  if total < 0 then total = 0 end
  redis.call('HSET', KEYS[3], 'total', total)
end
local allowed = 0
if cshort < lshort and total < llong then
  allowed = 1
  if count then
    local seq = redis.call('HINCRBY', KEYS[3], 'seq', 1)
    redis.call('ZADD', KEYS[1], now, string.format('%d:%d', now, seq))
    local bucket = string.format('%d', now - now % bms)
    redis.call('ZADD', KEYS[2], now, bucket)
    redis.call('HINCRBY', KEYS[3], bucket, 1)
    cshort, total = cshort + 1, total + 1
    redis.call('HSET', KEYS[3], 'total', total)
    redis.call('PEXPIRE', KEYS[1], wshort)
    redis.call('PEXPIRE', KEYS[2], wlong)
    redis.call('PEXPIRE', KEYS[3], wlong)
  end
end
local tshort, tlong = wshort, wlong
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if #first > 0 then tshort = tonumber(first[2]) + wshort - now end
local firstb = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if #firstb > 0 then tlong = tonumber(firstb[2]) + wlong - now end
return {allowed, cshort, total, tshort, tlong}
"""

MINUTE_MS = 60_000
DAY_MS = 86_400_000
BUCKET_MS = 60_000  # the day window's resolution

_clients: dict[str, tuple[redis.Redis, Any]] = {}
_clients_lock = threading.Lock()


def _client() -> tuple[redis.Redis, Any]:
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
    return found


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


def window_count(
    *,
    key: str,
    short: tuple[int, int],
    long: tuple[int, int],
    names: tuple[str, str],
    now_ms: int | None,
    count: bool = True,
) -> RateLimitResult:
    """Run the script on the windows (limit, window ms) of one counter; the result describes the binding one."""
    (lshort, wshort), (llong, wlong) = short, long
    try:
        allowed, cshort, clong, tshort, tlong = _client()[1](
            keys=[f"{key}:s", f"{key}:b", f"{key}:c"],
            args=[lshort, wshort, llong, wlong, BUCKET_MS, int(now_ms or 0), 1 if count else 0],
        )
    except redis.RedisError as exc:
        # Fails closed (an uncounted request would bypass the limits), but says what is down and when to retry.
        retry = int(settings.RATELIMIT_UNAVAILABLE_RETRY_AFTER)
        if shares_graph_store(settings.RATELIMIT_REDIS_URL):  # the embedded default: one server, one cause
            raise store_unavailable(settings.RATELIMIT_REDIS_URL, retry) from exc
        raise ServiceUnavailable(
            "The rate limiter's Redis is unreachable, so requests cannot be counted and none is served; "
            "nothing was charged or changed.",
            code="ratelimit_unavailable",
            hint=f"This is on our side (Redis is down) and restarts by itself; retry in {retry} s (Retry-After). "
            "GET /healthz and /readyz answer without it.",
            extra={"unavailable": "redis", "retry_after": retry},
            headers={"Retry-After": str(retry)},
        ) from exc
    reset_short, reset_long = _seconds(int(tshort), wshort), _seconds(int(tlong), wlong)
    left_short, left_long = max(0, lshort - int(cshort)), max(0, llong - int(clong))
    policy = f"{lshort};w={wshort // 1000}, {llong};w={wlong // 1000}"
    short_binds = left_short <= left_long
    if allowed:
        if short_binds:
            return RateLimitResult(True, lshort, left_short, reset_short, 0, policy, names[0])
        return RateLimitResult(True, llong, left_long, reset_long, 0, policy, names[1])
    retry = max(reset_short if left_short == 0 else 0, reset_long if left_long == 0 else 0)
    if left_long == 0:
        return RateLimitResult(False, llong, 0, reset_long, retry, policy, names[1])
    return RateLimitResult(False, lshort, 0, reset_short, retry, policy, names[0])


def address_throttle(*, action: str, address: str, count: bool = True, now_ms: int | None = None) -> RateLimitResult:
    """Count (count=False: only check) one anonymous attempt of `action` from a client address
    against settings.ANON_THROTTLES[action]. Raises RateLimited (429, with Retry-After) when the
    address is over the limit, ServiceUnavailable (503) if Redis cannot be reached."""
    rule = settings.ANON_THROTTLES[action]
    window = int(rule["window_seconds"])
    result = window_count(
        key=f"rla:{{{action}:{address[:64]}}}",
        short=(int(rule["per_window"]), window * 1000),
        long=(int(rule["per_day"]), DAY_MS),
        names=(_window_name(window), "day"),
        now_ms=now_ms,
        count=count,
    )
    if not result.allowed:
        raise RateLimited(
            f"Too many attempts from your address ({result.limit} per {result.window}).",
            code=f"{action}_throttled",
            hint=f"Wait {result.retry_after} s (Retry-After) and retry.",
            extra={"limit": result.limit, "retry_after": result.retry_after},
            headers={"Retry-After": str(result.retry_after)},
        )
    return result


def _window_name(seconds: int) -> str:
    for unit, size in (("day", 86_400), ("hour", 3600), ("minute", 60)):
        if seconds % size == 0:
            return unit if seconds == size else f"{seconds // size} {unit}s"
    return f"{seconds} s"


def ratelimit_redis_check() -> None:
    """Readiness: the rate limiter's Redis answers and never evicts keys. Raises RatelimitRedisEvicts, RedisError."""
    client = _client()[0]
    policy = str(client.info("memory").get("maxmemory_policy", ""))
    if policy != "noeviction":
        raise RatelimitRedisEvicts(
            f"RATELIMIT_REDIS_URL's Redis has maxmemory-policy {policy!r}; rate-limit counters need "
            "'noeviction' (an evicted counter is a fresh limit)."
        )


class RatelimitRedisEvicts(Exception):
    """The rate limiter's Redis may evict counters (maxmemory-policy is not noeviction)."""


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
