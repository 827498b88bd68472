"""A test-only urlconf: the real routes plus small metered endpoints built on billing.metering.

Each endpoint is a door (Meter: dry_run, Idempotency-Key, the stored answer) over a small use case that owns its
money, as the project's services do: it quotes, charges or holds under the key it is given, works, and refunds
or releases when the work fails."""

from __future__ import annotations

import threading
import time
from typing import Any

from django.urls import path
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from billing.metering import Meter
from billing.services import (
    credit_balance,
    credits_charge,
    credits_hold,
    credits_quote,
    credits_refund,
    credits_release,
    quote_out,
)
from exograph.core.errors import ValidationError
from exograph.urls import urlpatterns as real_urlpatterns

calls = {"count": 0}
calls_lock = threading.Lock()


class ChatLikeApi(APIView):
    """Charges chat.snap, then 'answers'; ?fail=1 fails after the charge (refunded)."""

    def post(self, request: Request) -> Response:
        meter = Meter.from_request(request, endpoint="test.chat")
        if meter.dry_run:
            return Response(quote_out(credits_quote(account=meter.account, action="chat.snap")))

        def answer(key: str) -> tuple[dict[str, Any], int]:
            charge = credits_charge(account=meter.account, action="chat.snap", idempotency_key=key)
            try:
                with calls_lock:
                    calls["count"] += 1
                    n = calls["count"]
                time.sleep(0.05)  # slow enough for concurrent retries to overlap
                if request.query_params.get("fail"):
                    raise ValidationError("The model refused.", code="model_failed", hint="Try again.")
            except BaseException:
                credits_refund(account=meter.account, charge_key=key, reason="test.chat failed")
                raise
            body = {"answer": f"answer #{n}", "echo": request.data.get("message")}
            return {**body, "credits_charged": charge.credits_charged, "balance": charge.balance}, 201

        return meter.run(answer)  # type: ignore[return-value]


class UploadLikeApi(APIView):
    """Works out pages first, quotes them on dry_run, charges under the request's key."""

    def post(self, request: Request) -> Response:
        meter = Meter.from_request(request, endpoint="test.upload")
        pages = int(request.data.get("pages", 1))
        if meter.dry_run:
            quote = credits_quote(account=meter.account, action="upload", units=pages)
            return Response({**quote_out(quote), "pages": pages})

        def upload(key: str) -> tuple[dict[str, Any], int]:
            charge = credits_charge(
                account=meter.account, action="upload", units=pages, idempotency_key=key, reference="test upload"
            )
            body = {"pages": pages, "charge_key": key}
            return {**body, "credits_charged": charge.credits_charged, "balance": charge.balance}, 201

        return meter.run(upload)  # type: ignore[return-value]


class ResearchLikeApi(APIView):
    """Holds min(price, budget_credits) up front, like research sessions; ?fail=1 fails after the hold (released)."""

    def post(self, request: Request) -> Response:
        from billing.prices import price_for

        meter = Meter.from_request(request, endpoint="test.research")
        budget = int(request.data.get("budget_credits", 100))
        if meter.dry_run:
            return Response(quote_out(credits_quote(account=meter.account, action="research.ponder", max_cost=budget)))

        def start(key: str) -> tuple[dict[str, Any], int]:
            amount = price_for("research.ponder", max_cost=budget)
            hold = credits_hold(account=meter.account, amount=amount, idempotency_key=key, reference="research test")
            if request.query_params.get("fail"):
                credits_release(hold=hold, reason="test.research failed")
                raise ValidationError("No sources.", code="no_sources")
            balance = credit_balance(account=meter.account)
            return {"hold_id": str(hold.pk), "credits_charged": amount, "credits_held": amount, "balance": balance}, 201

        return meter.run(start)  # type: ignore[return-value]


urlpatterns = [
    path("api/v1/test/research/", ResearchLikeApi.as_view()),
    path("api/v1/test/chat/", ChatLikeApi.as_view()),
    path("api/v1/test/upload/", UploadLikeApi.as_view()),
    *real_urlpatterns,
]
