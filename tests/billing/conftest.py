"""Billing test helpers: concurrency runner, ledger checks, a fake Stripe API and signed webhooks."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

import pytest
from django.db import connection
from django.db.models import Sum

from billing.models import CreditAccount, CreditEntry
from exograph.accounts.models import User

WEBHOOK_SECRET = "whsec_test_secret_for_billing_tests"


def run_concurrently(fn: Callable[[int], Any], n: int, *, workers: int = 25) -> list[tuple[str, Any]]:
    """Call fn(0..n-1) from `workers` threads at once; returns ("ok", result) or ("err", exception) per call.

    The first `workers` calls start together (a barrier) and every call runs on its own database
    connection (closed at the end), with nothing of ours serialising them: on PostgreSQL they
    overlap on row locks; on SQLite (a file, WAL, `transaction_mode="IMMEDIATE"` with a busy
    `timeout`, see exograph/settings.py) reads overlap and each writing transaction waits for the
    database lock, exactly as concurrent requests of the embedded default do.
    """
    start = threading.Barrier(min(workers, n))

    def call(i: int) -> tuple[str, Any]:
        if i < min(workers, n):
            start.wait(timeout=30)
        try:
            return "ok", fn(i)
        except Exception as exc:
            return "err", exc
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(call, range(n)))


def ledger_sum(user: User) -> int:
    return int(CreditEntry.objects.filter(account__user=user).aggregate(s=Sum("amount"))["s"] or 0)


def held_sum(user: User) -> int:
    return int(CreditEntry.objects.filter(account__user=user).aggregate(s=Sum("held_change"))["s"] or 0)


def account_of(user: User) -> CreditAccount:
    return CreditAccount.objects.get(user=user)


def assert_ledger_whole(user: User) -> None:
    account = account_of(user)
    assert account.balance >= 0 and account.held >= 0
    assert ledger_sum(user) == account.balance
    assert held_sum(user) == account.held


# --- Stripe ------------------------------------------------------------------------------


class FakeStripe:
    """A loopback stand-in for api.stripe.com: POST /v1/checkout/sessions like the real API.

    Like Stripe, a request with an Idempotency-Key seen before gets the first answer back.
    `fail_with` answers every request with that status; `fail_once_retryable` answers the next
    one 503 with `Stripe-Should-Retry: true` (the SDK retries it).
    """

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.fail_with: int | None = None
        self.fail_once_retryable = False
        self.answers: dict[str, tuple[int, dict[str, Any]]] = {}
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                form = parse_qs(self.rfile.read(length).decode())
                key = self.headers.get("Idempotency-Key")
                fake.requests.append(
                    {"path": self.path, "form": form, "auth": self.headers.get("Authorization"),
                     "idempotency_key": key, "stripe_version": self.headers.get("Stripe-Version")}
                )  # fmt: skip
                if fake.fail_once_retryable:
                    fake.fail_once_retryable = False
                    self._send(503, {"error": {"type": "api_error", "message": "try again"}}, retry="true")
                    return
                if fake.fail_with:
                    body = {"error": {"type": "api_error", "message": "boom"}}
                    self._send(fake.fail_with, body, retry="false")
                    return
                if key is not None and key in fake.answers:
                    self._send(*fake.answers[key])
                    return
                if self.path != "/v1/checkout/sessions":
                    self._send(404, {"error": {"type": "invalid_request_error", "message": "Unrecognized request URL"}})
                    return
                session_id = f"cs_test_{uuid.uuid4().hex}"
                answer = {
                    "id": session_id,
                    "object": "checkout.session",
                    "mode": "payment",
                    "payment_status": "unpaid",
                    "status": "open",
                    "amount_total": int(form["line_items[0][price_data][unit_amount]"][0]),
                    "currency": form["line_items[0][price_data][currency]"][0],
                    "client_reference_id": form.get("client_reference_id", [None])[0],
                    "metadata": {k[9:-1]: v[0] for k, v in form.items() if k.startswith("metadata[")},
                    "url": f"https://checkout.stripe.com/c/pay/{session_id}",
                }
                if key is not None:
                    fake.answers[key] = (200, answer)
                self._send(200, answer)

            def _send(self, status: int, body: dict[str, Any], retry: str | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Request-Id", f"req_{uuid.uuid4().hex[:12]}")
                if retry is not None:
                    self.send_header("Stripe-Should-Retry", retry)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_stripe(settings) -> Iterator[FakeStripe]:  # type: ignore[no-untyped-def]
    """The fake, reached through the SDK's StripeClient via STRIPE_API_BASE (no global SDK state touched)."""
    fake = FakeStripe()
    settings.STRIPE_SECRET_KEY = "sk_test_fake"
    settings.USE_STRIPE = True
    settings.STRIPE_WEBHOOK_SECRET = WEBHOOK_SECRET
    settings.STRIPE_API_BASE = fake.url
    yield fake
    fake.close()


@pytest.fixture
def webhooks_on(settings) -> None:  # type: ignore[no-untyped-def]
    settings.STRIPE_WEBHOOK_SECRET = WEBHOOK_SECRET


def sign(payload: str, *, secret: str = WEBHOOK_SECRET, timestamp: int | None = None) -> str:
    """The real Stripe-Signature scheme: t=<unix>,v1=HMAC-SHA256(secret, "<t>.<payload>")."""
    t = int(time.time()) if timestamp is None else timestamp
    mac = hmac.new(secret.encode(), f"{t}.{payload}".encode(), hashlib.sha256).hexdigest()
    return f"t={t},v1={mac}"


def event(event_type: str, obj: dict[str, Any], *, event_id: str | None = None, **fields: Any) -> str:
    """A Stripe event body as Stripe sends it (in our API version, test mode); `fields` override its keys."""
    from django.conf import settings

    return json.dumps(
        {
            "id": event_id or f"evt_{uuid.uuid4().hex}",
            "object": "event",
            "api_version": settings.STRIPE_API_VERSION,
            "created": int(time.time()),
            "type": event_type,
            "livemode": False,
            "pending_webhooks": 1,
            "request": {"id": None, "idempotency_key": None},
            "data": {"object": obj},
            **fields,
        }
    )


def completed_session(
    session_id: str, *, user: User, pack: str = "pack_500", payment_intent: str = ""
) -> dict[str, Any]:
    """A paid `checkout.session` object for `pack`: the amount and currency our row expects."""
    from django.conf import settings

    return {
        "id": session_id,
        "object": "checkout.session",
        "mode": "payment",
        "payment_status": "paid",
        "status": "complete",
        "amount_total": settings.BILLING_PACKS[pack]["price"],
        "currency": settings.STRIPE_CURRENCY,
        "payment_intent": payment_intent or f"pi_{uuid.uuid4().hex[:16]}",
        "client_reference_id": str(user.pk),
        "metadata": {"user_id": str(user.pk), "pack": pack},
    }
