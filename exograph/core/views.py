"""Health endpoints: /healthz (process alive) and /readyz (each dependency answers)."""

from __future__ import annotations

import inspect
import logging
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from functools import partial
from urllib.parse import urlsplit

import redis
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from exograph.core.api import DATABASE_RETRY_AFTER, api_not_found, api_server_error, database_outage, error_body
from exograph.core.errors import Warming
from exograph.core.falkor import DEFAULT, SENTINEL_SCHEMES, falkordb_client, falkordb_primaries
from exograph.core.stores import server_label, server_of

logger = logging.getLogger(__name__)


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


def _check_sql(timeout: float) -> None:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    finally:
        connection.close()  # this ran in a check thread: give its connection back


def _ping(url: str, timeout: float) -> None:
    client = redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)
    try:
        client.ping()
    finally:
        client.close()


def _check_redis(timeout: float) -> None:
    _ping(settings.REDIS_URL, timeout)


def _ping_primary(server: str, timeout: float) -> None:
    """PING one FalkorDB primary: a fresh client with the check's timeout on its URL; a Sentinel-managed one through
    the process's client (Sentinel names the server; the readiness deadline bounds the wait)."""
    url = falkordb_primaries()[server]
    if urlsplit(url).scheme in SENTINEL_SCHEMES:
        falkordb_client(server).connection.ping()
    else:
        _ping(url, timeout)  # the server; the graph calls' own pool has its longer socket timeout


def _check_falkordb(timeout: float) -> None:
    _ping_primary(DEFAULT, timeout)


def _primary_checks() -> tuple[dict[str, Callable[..., None]], dict[str, str], dict[str, Callable[[], str]]]:
    """A check for each FalkorDB primary besides the default (FALKORDB_PRIMARIES): its graphs are unreachable
    when it is down, so the process is not ready. Returns the checks, their names and their servers' URLs."""
    checks: dict[str, Callable[..., None]] = {}
    names: dict[str, str] = {}
    servers: dict[str, Callable[[], str]] = {}
    for server, url in falkordb_primaries().items():
        if server == DEFAULT:
            continue
        key = f"falkordb_{server}"
        checks[key] = partial(_ping_primary, server)
        names[key] = f"FalkorDB graph store primary {server!r}"
        if urlsplit(url).scheme not in SENTINEL_SCHEMES:
            servers[key] = partial(str, url)
    return checks, names, servers


# name -> check(timeout); apps add theirs in AppConfig.ready (core imports nothing of theirs). A check raises when
# its component is not ready (Warming: still starting); one taking longer than READYZ_CHECK_TIMEOUT is `timeout`.
CHECKS: dict[str, Callable[..., None]] = {"sql": _check_sql, "redis": _check_redis, "falkordb": _check_falkordb}
NAMES = {"sql": "SQL database", "redis": "Redis", "falkordb": "FalkorDB graph store"}
# name -> the URL of the server it checks: components on one server are reported as that one server when it fails.
SERVERS: dict[str, Callable[[], str]] = {
    "redis": lambda: settings.REDIS_URL,
    "falkordb": lambda: settings.FALKORDB_URL,
}


def _run(check: Callable[..., None], timeout: float) -> None:
    """Run one check, passing the timeout to the checks that take one (apps' checks may not)."""
    try:
        signature = inspect.signature(check)
    except (TypeError, ValueError):
        signature = None
    if signature is not None and signature.parameters:
        check(timeout)
    else:
        check()


def _status(exc: BaseException) -> str:
    if isinstance(exc, Warming):
        return "warming"
    if isinstance(exc, (FutureTimeout, redis.TimeoutError, TimeoutError)):
        return "timeout"
    return f"unavailable: {exc.__class__.__name__}"


def readiness() -> tuple[dict[str, str], list[str]]:
    """Every check at once, each bounded by READYZ_CHECK_TIMEOUT: (status by check, one sentence per cause).

    Components on one server that fails to answer (timeout, connection error) are one cause, naming the server
    and what it serves; they all get its status (never `ok` beside `timeout` for one server)."""
    timeout = float(settings.READYZ_CHECK_TIMEOUT)
    primaries, primary_names, primary_servers = _primary_checks()
    checks = {**CHECKS, **primaries}
    names_of = {**NAMES, **primary_names}
    servers_of = {**SERVERS, **primary_servers}
    pool = ThreadPoolExecutor(max_workers=len(checks), thread_name_prefix="readyz")
    try:
        futures = {name: pool.submit(_run, check, timeout) for name, check in checks.items()}
        deadline = time.monotonic() + timeout
        results: dict[str, str] = {}
        unreachable: set[str] = set()  # no answer from its server at all (not a wrong answer)
        for name, future in futures.items():
            try:
                future.result(timeout=max(0.0, deadline - time.monotonic()))
            except Exception as exc:  # any failure means not ready; name it
                results[name] = _status(exc)
                if isinstance(exc, (FutureTimeout, TimeoutError, redis.RedisError, OSError)) and not isinstance(
                    exc, redis.ResponseError
                ):
                    unreachable.add(name)
                logger.warning("readiness check %s failed: %s", name, results[name])
            else:
                results[name] = "ok"
    finally:
        pool.shutdown(wait=False, cancel_futures=True)  # a hung check's thread ends on its own socket timeout
    servers: dict[str, list[str]] = {}  # server -> the checks of components it serves
    urls: dict[str, str] = {}
    for name in checks:
        if name in servers_of:
            url = servers_of[name]()
            servers.setdefault(server_of(url), []).append(name)
            urls[server_of(url)] = url
    causes: list[str] = []
    grouped: set[str] = set()
    for server, names in servers.items():
        down = [results[n] for n in names if n in unreachable]
        if len(names) < 2 or not down:
            continue
        status = "timeout" if "timeout" in down else down[0]
        for name in names:
            results[name] = status
        grouped.update(names)
        what = f"did not answer within {timeout:g} s" if status == "timeout" else "is unreachable"
        causes.append(f"{server_label(urls[server])} (serving {', '.join(names_of[n] for n in names)}) {what}")
    for name, status in results.items():
        if status == "ok" or name in grouped:
            continue
        if status == "timeout":
            causes.append(f"{names_of[name]} did not answer within {timeout:g} s")
        elif status == "warming":
            causes.append(f"{names_of[name]} is still warming up")
        else:
            causes.append(f"{names_of[name]} unreachable")
    return results, causes


@require_GET
def readyz(request: HttpRequest) -> JsonResponse:
    results, causes = readiness()
    if causes:
        warming = all(status in {"ok", "warming"} for status in results.values())
        return JsonResponse(
            {
                "status": "warming" if warming else "unavailable",
                "checks": results,
                "error": {
                    "code": "warming" if warming else "service_unavailable",
                    "message": "Not ready: " + "; ".join(causes) + ".",
                    "hint": "Wait a few seconds and retry."
                    if warming
                    else "Check that the named service is running and its URL setting is right.",
                },
            },
            status=503,
        )
    return JsonResponse({"status": "ok", "checks": results})


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """JSON envelope under /api/, the HTML page elsewhere."""
    if request.path.startswith("/api/"):
        return api_not_found(request, exception)
    return render(request, "404.html", status=404)


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """JSON envelope under /api/, the HTML page elsewhere (CSRF failures land here too)."""
    if request.path.startswith("/api/"):
        return JsonResponse(error_body("forbidden", "You are not allowed to do that."), status=403)
    return render(request, "403.html", status=403)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """CSRF_FAILURE_VIEW: our 403 page saying what to do (the reason is Django's, never user data)."""
    if request.path.startswith("/api/"):
        return JsonResponse(
            error_body("csrf_failed", "CSRF check failed.", "Send the X-CSRFToken header or use an API key."),
            status=403,
        )
    message = "The form expired or came from another site. Go back, reload the page and try again."
    return render(request, "403.html", {"message": message}, status=403)


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500; called while the exception is handled, so a database outage (anywhere: a middleware, a view)
    becomes a 503 naming the database with Retry-After, not a 500."""
    outage = database_outage(sys.exc_info()[1])
    if outage is not None:
        if request.path.startswith("/api/"):
            response: HttpResponse = JsonResponse(
                error_body(outage.code, outage.message, outage.hint, outage.extra), status=503
            )
        else:
            response = HttpResponse(
                '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Unavailable · ExoGraph'
                "</title></head><body><h1>ExoGraph is briefly unavailable</h1><p>Our database is down or "
                f"restarting. Nothing was lost; retry in {DATABASE_RETRY_AFTER} seconds.</p></body></html>",
                status=503,
                content_type="text/html; charset=utf-8",
            )
        response["Retry-After"] = str(DATABASE_RETRY_AFTER)
        return response
    if request.path.startswith("/api/"):
        return api_server_error(request)
    return render(request, "500.html", status=500)
