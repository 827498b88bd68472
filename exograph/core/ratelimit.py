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

A keyed API request asks Redis once here: API-key authentication leaves the failed-key check of a right key to the
account throttle, whose script looks at the address counter and counts the account only if the address is within its
limit (window_count_after_address_check; the two counters' keys live in different hash slots, so this wants one
Redis, not a cluster, which is what RATELIMIT_REDIS_URL names). Why that neither counts a refused request nor tells a
right key from a wrong one: see address_check_defer below.
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

# window(): one counter's sliding windows. k1: the short window's log (sorted set: member per request, score = its
# time in ms). k2: the long window's buckets (sorted set: member = bucket start, score = its latest request). k3: the
# long window's counts (hash: bucket start -> count, 'total', 'seq' for unique members). Limits and windows in ms,
# bucket ms, now ms, count (true) or only look (false). Returns {allowed, short count, long count, ms until the
# short window frees a slot, ms until the long one does}.
_WINDOW_LUA = """
local function window(k1, k2, k3, lshort, wshort, llong, wlong, bms, now, count)
  redis.call('ZREMRANGEBYSCORE', k1, '-inf', now - wshort)
  local cshort = redis.call('ZCARD', k1)
  local total = tonumber(redis.call('HGET', k3, 'total') or '0')
  local old = redis.call('ZRANGEBYSCORE', k2, '-inf', now - wlong)
  if #old > 0 then
    for _, bucket in ipairs(old) do
      total = total - tonumber(redis.call('HGET', k3, bucket) or '0')
    end
    redis.call('HDEL', k3, unpack(old))
    redis.call('ZREMRANGEBYSCORE', k2, '-inf', now - wlong)
    if total < 0 then total = 0 end
    redis.call('HSET', k3, 'total', total)
  end
  local allowed = 0
  if cshort < lshort and total < llong then
    allowed = 1
    if count then
      local seq = redis.call('HINCRBY', k3, 'seq', 1)
      redis.call('ZADD', k1, now, string.format('%d:%d', now, seq))
      local bucket = string.format('%d', now - now % bms)
      redis.call('ZADD', k2, now, bucket)
      redis.call('HINCRBY', k3, bucket, 1)
      cshort, total = cshort + 1, total + 1
      redis.call('HSET', k3, 'total', total)
      redis.call('PEXPIRE', k1, wshort)
      redis.call('PEXPIRE', k2, wlong)
      redis.call('PEXPIRE', k3, wlong)
    end
  end
  local tshort, tlong = wshort, wlong
  local first = redis.call('ZRANGE', k1, 0, 0, 'WITHSCORES')
  if #first > 0 then tshort = tonumber(first[2]) + wshort - now end
  local firstb = redis.call('ZRANGE', k2, 0, 0, 'WITHSCORES')
  if #firstb > 0 then tlong = tonumber(firstb[2]) + wlong - now end
  return {allowed, cshort, total, tshort, tlong}
end
local function clock(now)
  if now > 0 then return now end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function limits(base)
  return tonumber(ARGV[base]), tonumber(ARGV[base + 1]), tonumber(ARGV[base + 2]), tonumber(ARGV[base + 3])
end
"""
# One counter. KEYS[1..3]: its keys; ARGV: short limit, short window ms, long limit, long window ms, bucket ms, now ms
# (0: Redis's clock), count (1) or only look (0).
_SCRIPT = (
    _WINDOW_LUA
    + """
local now = clock(tonumber(ARGV[6]))
local lshort, wshort, llong, wlong = limits(1)
return window(KEYS[1], KEYS[2], KEYS[3], lshort, wshort, llong, wlong, tonumber(ARGV[5]), now, ARGV[7] == '1')
"""
)
# Two counters in one round trip: look at the first (KEYS[1..3], never counted), and only if it allows, count the
# second (KEYS[4..6]). ARGV: the first's four limits, the second's four limits, bucket ms, now ms (0: Redis's clock).
# Returns {0, the first's figures} when the first refuses, else {1, the second's figures}.
_CHECK_THEN_COUNT_SCRIPT = (
    _WINDOW_LUA
    + """
local now, bms = clock(tonumber(ARGV[10])), tonumber(ARGV[9])
local l1, w1, l2, w2 = limits(1)
local first = window(KEYS[1], KEYS[2], KEYS[3], l1, w1, l2, w2, bms, now, false)
if first[1] == 0 then
  return {0, unpack(first)}
end
l1, w1, l2, w2 = limits(5)
return {1, unpack(window(KEYS[4], KEYS[5], KEYS[6], l1, w1, l2, w2, bms, now, true))}
"""
)

MINUTE_MS = 60_000
DAY_MS = 86_400_000
BUCKET_MS = 60_000  # the day window's resolution

_clients: dict[str, tuple[redis.Redis, Any, Any]] = {}
_clients_lock = threading.Lock()


def _client() -> tuple[redis.Redis, Any, Any]:
    """(client, the one-counter script, the check-then-count script) for RATELIMIT_REDIS_URL."""
    url = settings.RATELIMIT_REDIS_URL
    found = _clients.get(url)
    if found is None:
        with _clients_lock:
            found = _clients.get(url)
            if found is None:
                timeout = settings.BILLING_RATELIMIT_TIMEOUT
                client = redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)
                found = (client, client.register_script(_SCRIPT), client.register_script(_CHECK_THEN_COUNT_SCRIPT))
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


@dataclass(frozen=True)
class Counter:
    """One counter's two sliding windows: its Redis key, (limit, window ms) of each, and their names."""

    key: str
    short: tuple[int, int]
    long: tuple[int, int]
    names: tuple[str, str]

    def keys(self) -> list[str]:
        return [f"{self.key}:s", f"{self.key}:b", f"{self.key}:c"]

    def limits(self) -> list[int]:
        return [self.short[0], self.short[1], self.long[0], self.long[1]]

    def result(self, figures: list[Any]) -> RateLimitResult:
        """The script's {allowed, counts, ms until a slot frees} as the binding window's figures."""
        allowed, cshort, clong, tshort, tlong = figures
        (lshort, wshort), (llong, wlong) = self.short, self.long
        reset_short, reset_long = _seconds(int(tshort), wshort), _seconds(int(tlong), wlong)
        left_short, left_long = max(0, lshort - int(cshort)), max(0, llong - int(clong))
        policy = f"{lshort};w={wshort // 1000}, {llong};w={wlong // 1000}"
        short_binds = left_short <= left_long
        if allowed:
            if short_binds:
                return RateLimitResult(True, lshort, left_short, reset_short, 0, policy, self.names[0])
            return RateLimitResult(True, llong, left_long, reset_long, 0, policy, self.names[1])
        retry = max(reset_short if left_short == 0 else 0, reset_long if left_long == 0 else 0)
        if left_long == 0:
            return RateLimitResult(False, llong, 0, reset_long, retry, policy, self.names[1])
        return RateLimitResult(False, lshort, 0, reset_short, retry, policy, self.names[0])


def _seconds(ms: int, window_ms: int) -> int:
    return max(1, math.ceil((ms if ms >= 0 else window_ms) / 1000))


def _run(*, pair: bool, keys: list[str], args: list[int]) -> list[Any]:
    """Run the one-counter script (pair=False) or the check-then-count script. Redis down: ServiceUnavailable."""
    try:
        _, single, check_then_count = _client()
        return (check_then_count if pair else single)(keys=keys, args=args)  # type: ignore[no-any-return]
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
    counter = Counter(key, short, long, names)
    figures = _run(
        pair=False, keys=counter.keys(), args=[*counter.limits(), BUCKET_MS, int(now_ms or 0), 1 if count else 0]
    )
    return counter.result(figures)


def _address_counter(*, action: str, address: str) -> Counter:
    rule = settings.ANON_THROTTLES[action]
    window = int(rule["window_seconds"])
    return Counter(
        f"rla:{{{action}:{address[:64]}}}",
        (int(rule["per_window"]), window * 1000),
        (int(rule["per_day"]), DAY_MS),
        (_window_name(window), "day"),
    )


def _address_refused(*, action: str, result: RateLimitResult) -> RateLimited:
    return RateLimited(
        f"Too many attempts from your address ({result.limit} per {result.window}).",
        code=f"{action}_throttled",
        hint=f"Wait {result.retry_after} s (Retry-After) and retry.",
        extra={"limit": result.limit, "retry_after": result.retry_after},
        headers={"Retry-After": str(result.retry_after)},
    )


def address_throttle(*, action: str, address: str, count: bool = True, now_ms: int | None = None) -> RateLimitResult:
    """Count (count=False: only check) one anonymous attempt of `action` from a client address
    against settings.ANON_THROTTLES[action]. Raises RateLimited (429, with Retry-After) when the
    address is over the limit, ServiceUnavailable (503) if Redis cannot be reached."""
    counter = _address_counter(action=action, address=address)
    result = window_count(
        key=counter.key, short=counter.short, long=counter.long, names=counter.names, now_ms=now_ms, count=count
    )
    if not result.allowed:
        raise _address_refused(action=action, result=result)
    return result


# --- An address check left for the request's counting throttle ------------------------------------------------------
# Past the failed-key limit every key from an address gets 429, a right one too: a right key must not be answered
# differently from a wrong one, or guessing would learn when it hits. A wrong key costs one call (counted, or refused
# uncounted past the limit, by the same atomic script); a key read from the database is checked before that read, so
# a guesser past the limit never reaches the database. A right key found in the lookup cache may leave its check on
# the request (address_check_defer) when the view's first throttle settles it (`settles_address_check`, DRF's default
# AccountRateThrottle): that throttle asks the check and the account's count in one script (one round trip). Why this
# answers exactly as checking at authentication did:
# - nothing answers before the check: what runs between authentication and the first throttle are the permission
#   classes, which can only refuse by raising, and DRF's exception handler settles a pending check before it answers
#   any error (address_check_settle: 429 instead of a read-only key's 403); a view whose first throttle does not settle
#   it (or has none) gets the check at authentication, as before;
# - nothing refused is counted: the address is only looked at (as before), and the script counts the account only
#   when the address is within its limit, so a request refused for its address is not counted against the account
#   (as before, when authentication refused it first), and a permission refusal never reaches the throttle;
# - the same refusal: the address's 429 (api_key_throttled, Retry-After) is built by the same function, and it wins
#   over the account's 429 as it did when it came first.

_PENDING = "_ratelimit_address_check"


def throttle_settles_address_check(view: Any) -> bool:
    """Whether the first throttle of a DRF view settles a deferred address check before the view runs."""
    get_throttles = getattr(view, "get_throttles", None)
    throttles = get_throttles() if get_throttles is not None else []
    return bool(throttles) and bool(getattr(throttles[0], "settles_address_check", False))


def address_check_defer(request: HttpRequest, *, action: str, address: str) -> None:
    """Leave address_throttle(action, address, count=False) to the request's throttle (or its error answer)."""
    setattr(request, _PENDING, (action, address))


def _address_check_take(request: Any) -> tuple[str, str] | None:
    request = getattr(request, "_request", request)  # a DRF Request or Django's
    pending: tuple[str, str] | None = getattr(request, _PENDING, None)
    if pending is not None:
        delattr(request, _PENDING)
    return pending


def address_check_settle(request: Any) -> None:
    """Run a deferred address check now (no count). Raises RateLimited (429) when the address is over its limit,
    ServiceUnavailable (503) without Redis; nothing when no check is pending."""
    pending = _address_check_take(request)
    if pending is not None:
        address_throttle(action=pending[0], address=pending[1], count=False)


def window_count_after_address_check(
    request: Any, *, key: str, short: tuple[int, int], long: tuple[int, int], names: tuple[str, str]
) -> RateLimitResult:
    """Count one request on a counter (window_count, Redis's clock), after the request's deferred address check if
    one is pending: both in one script, one round trip. The address is only looked at, never counted, and the
    counter is counted only when the address is within its limit. Raises the address check's RateLimited (429)."""
    pending = _address_check_take(request)
    if pending is None:
        return window_count(key=key, short=short, long=long, names=names, now_ms=None)
    action, address = pending
    first, second = _address_counter(action=action, address=address), Counter(key, short, long, names)
    figures = _run(
        pair=True,
        keys=[*first.keys(), *second.keys()],
        args=[*first.limits(), *second.limits(), BUCKET_MS, 0],
    )
    if not figures[0]:
        raise _address_refused(action=action, result=first.result(figures[1:]))
    return second.result(figures[1:])


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
