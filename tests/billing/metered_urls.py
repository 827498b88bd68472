"""A test-only urlconf: the real routes plus two small metered endpoints built on billing.metering."""

from __future__ import annotations

import threading
import time
from typing import Any

from django.urls import path
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from billing.metering import Meter, metered_response
from exograph.core.errors import ValidationError
from exograph.urls import urlpatterns as real_urlpatterns

calls = {"count": 0}
calls_lock = threading.Lock()


class ChatLikeApi(APIView):
    """Charges chat.snap, then 'answers'; ?fail=1 fails after the charge."""

    def post(self, request: Request) -> Response:
        def perform(meter: Meter) -> tuple[dict[str, Any], int]:
            with calls_lock:
                calls["count"] += 1
                n = calls["count"]
            time.sleep(0.05)  # slow enough for concurrent retries to overlap
            if request.query_params.get("fail"):
                raise ValidationError("The model refused.", code="model_failed", hint="Try again.")
            return {"answer": f"answer #{n}", "echo": request.data.get("message")}, 201

        return metered_response(request, endpoint="test.chat", action="chat.snap", perform=perform)


class UploadLikeApi(APIView):
    """Works out pages first, quotes them on dry_run, charges inside its own step."""

    def post(self, request: Request) -> Response:
        meter = Meter.from_request(request, endpoint="test.upload")
        pages = int(request.data.get("pages", 1))
        if meter.dry_run:
            return meter.quote_response(action="upload", units=pages, extra={"pages": pages})

        def perform(m: Meter) -> tuple[dict[str, Any], int]:
            m.charge(action="upload", units=pages, reference="test upload")
            return {"pages": pages, "charge_key": m.charge_key}, 201

        return meter.run(perform)


class ResearchLikeApi(APIView):
    """Holds min(price, budget_credits) up front, like research sessions; ?fail=1 fails after the hold."""

    def post(self, request: Request) -> Response:
        from billing.prices import price_for

        meter = Meter.from_request(request, endpoint="test.research")
        budget = int(request.data.get("budget_credits", 100))
        if meter.dry_run:
            return meter.quote_response(action="research.ponder", max_cost=budget)

        def perform(m: Meter) -> tuple[dict[str, Any], int]:
            hold = m.hold(amount=price_for("research.ponder", max_cost=budget), reference="research test")
            if request.query_params.get("fail"):
                raise ValidationError("No sources.", code="no_sources")
            return {"hold_id": str(hold.pk)}, 201

        return meter.run(perform)


urlpatterns = [
    path("api/v1/test/research/", ResearchLikeApi.as_view()),
    path("api/v1/test/chat/", ChatLikeApi.as_view()),
    path("api/v1/test/upload/", UploadLikeApi.as_view()),
    *real_urlpatterns,
]
