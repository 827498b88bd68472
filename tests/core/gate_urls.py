"""URLs for tests/core/test_request_gate.py: the service's own, plus a view that holds its pooled connection."""

from __future__ import annotations

import threading
import time

from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.urls import path

from exograph.urls import handler403, handler404, handler500  # noqa: F401 (the service's error pages)
from exograph.urls import urlpatterns as service_urlpatterns


class Holding:
    """What the hold view saw: how many requests were inside Django at once, at most."""

    lock = threading.Lock()
    inside = 0
    most = 0
    entered = threading.Event()
    release = threading.Event()

    @classmethod
    def reset(cls) -> None:
        cls.inside = cls.most = 0
        cls.entered = threading.Event()
        cls.release = threading.Event()


def hold(request: HttpRequest) -> JsonResponse:
    """Take a pooled connection, then wait with it held (as a request queued on the embedder does)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    with Holding.lock:
        Holding.inside += 1
        Holding.most = max(Holding.most, Holding.inside)
    Holding.entered.set()
    try:
        if request.GET.get("until") == "released":
            Holding.release.wait(60)
        else:
            time.sleep(1.0)
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    finally:
        with Holding.lock:
            Holding.inside -= 1
    return JsonResponse({"ok": True})


urlpatterns = [path("api/v1/test-gate/hold", hold), *service_urlpatterns]
