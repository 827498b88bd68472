"""Health endpoints: /healthz (process alive) and /readyz (each dependency answers)."""

from __future__ import annotations

import logging
import sys

import redis
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from exograph.core.api import DATABASE_RETRY_AFTER, api_not_found, api_server_error, database_outage, error_body
from exograph.core.falkor import falkordb_ping

logger = logging.getLogger(__name__)


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


def _check_sql() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def _check_redis() -> None:
    client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)
    try:
        client.ping()
    finally:
        client.close()


def _check_falkordb() -> None:
    falkordb_ping()


CHECKS = {"sql": _check_sql, "redis": _check_redis, "falkordb": _check_falkordb}
NAMES = {"sql": "SQL database", "redis": "Redis", "falkordb": "FalkorDB graph store"}


@require_GET
def readyz(request: HttpRequest) -> JsonResponse:
    results: dict[str, str] = {}
    failed: list[str] = []
    for name, check in CHECKS.items():
        try:
            check()
        except Exception as exc:  # any failure means not ready; name it
            logger.warning("readiness check %s failed: %s", name, exc.__class__.__name__)
            results[name] = f"unavailable: {exc.__class__.__name__}"
            failed.append(name)
        else:
            results[name] = "ok"
    if failed:
        message = "Not ready: " + ", ".join(NAMES[n] for n in failed) + " unreachable."
        return JsonResponse(
            {
                "status": "unavailable",
                "checks": results,
                "error": {
                    "code": "service_unavailable",
                    "message": message,
                    "hint": "Check that the named service is running and its URL setting is right.",
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
