"""Metering for REST endpoints that cost credits: dry runs, charges, Idempotency-Key replays.

For the documents, chat and research endpoints. Two ways in:

1. Simple (charge first, then work; chat):

    from billing.metering import metered_response

    def post(self, request):
        data = validated(self.InputSerializer, request.data)
        return metered_response(
            request, endpoint="chat.messages.create", action=f"chat.{data['model']}",
            perform=lambda meter: (chat_message_send(actor=meter.account, ...), 201),
        )

   `perform(meter)` returns (JSON-able dict, HTTP status). The answer gets `credits_charged`
   and `balance` added. If perform raises, the charge is refunded and the error answered.

2. Full control (work out the units first, charge inside your own transaction, or hold):

    from billing.metering import Meter

    def post(self, request):
        meter = Meter.from_request(request, endpoint="documents.upload")   # 400 on a bad header/flag
        pages = count_pages(upload)                                          # read the file first
        if meter.dry_run:
            return meter.quote_response(action="upload", units=pages, extra={"pages": pages})

        def perform(meter: Meter) -> tuple[dict, int]:
            with transaction.atomic():
                doc = document_create(actor=meter.account, ...)
                meter.charge(action="upload", units=pages, reference=f"document {doc.id}")
            return DocumentOut(doc).data, 201
            # research: meter.hold(amount=price_for(f"research.{model}", max_cost=budget)) instead

        return meter.run(perform)

   `meter.charge_key` is the idempotency key of the charge (and of a hold): store it to refund
   later (`credits_refund(account=..., charge_key=meter.charge_key, reason=...)`, e.g. when an
   ingest task fails) or keep the returned Hold for `credits_capture` (with a stable key from your
   ids, e.g. ``f"research:{session.id}:step:{step.id}"``), `credits_hold_touch` (long work between
   captures) and `credits_release`.

For a hold, `credits_charged` counts the reserved credits and `credits_held` says how many of
them are a reservation (captured step by step, the rest released; see billing.services.holds).

`dry_run=true` (query string or body) answers ``{"dry_run": true, "credits_needed", "balance",
"covered", ...extra}`` and changes nothing. `Idempotency-Key: <≤200 printable chars>` stores the
first successful answer per (account, key, endpoint); a retry gets it back verbatim (status
and body, plus `Idempotent-Replayed: true`). A retry while the first one runs waits for it up to
BILLING_IDEMPOTENCY_WAIT_SECONDS (2 s), then answers 409 `idempotency_in_progress` with Retry-After.
The first one's claim is held by a lease renewed by a heartbeat (exograph.core.leases): a claim whose
process died (its lease expired, or its holder pid on this host is gone) is settled at once by the
retry: nothing charged yet → the retry runs it; its charge refunded (the chat sweep refunds an
interrupted answer) → the retry gets that outcome, stored (503 `request_interrupted`, the refund
named); its charge kept and not (yet) refunded → 409 with Retry-After until the sweep settles it, or
BILLING_IDEMPOTENCY_STALE_SECONDS pass (then the key runs again). A retry must be the same request: the
first one's fingerprint (method, path, query and a digest of the parsed body, files by their
bytes) is stored with it, and the key reused for a different request answers 422
`idempotency_key_reused`. An error answer is not stored and its charge is refunded, so the
same key may be retried after fixing the cause.
"""

from __future__ import annotations

import hashlib
import logging
import time
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.http import HttpResponse
from django.http.response import HttpResponseBase
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from billing.models import CreditEntry, EntryKind, Hold, IdempotencyStatus, IdempotentRequest
from billing.services.holds import credits_hold, credits_release
from billing.services.ledger import (
    ChargeResult,
    _check_key,
    credit_balance,
    credits_charge,
    credits_quote,
    credits_refund,
    ledger_key,
    quote_out,
)
from exograph.accounts.models import User
from exograph.core.api import actor_of, error_body
from exograph.core.errors import Conflict, ExoGraphError, NotFound, ValidationError
from exograph.core.leases import LeaseKind, lease_expired, lease_hold, lease_kind_register
from exograph.core.models import Lease

logger = logging.getLogger(__name__)

IDEMPOTENCY_HEADER = "Idempotency-Key"
# The lease over a running claim (subject: the IdempotentRequest id), renewed by lease_hold's heartbeat.
IDEMPOTENCY_LEASE = "billing.idempotency"
# An expired claim lease is settled by the next retry, not by the sweep: the sweep only drops it.
lease_kind_register(
    LeaseKind(
        name=IDEMPOTENCY_LEASE, active=lambda subject_id: False, resume=lambda lease: None, give_up=lambda *_: None
    )
)
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}

Perform = Callable[["Meter"], tuple[dict[str, Any], int]]


def dry_run_value(raw: Any) -> bool:
    """The one reading of a `dry_run` value on every paid endpoint: absent (None), a JSON boolean, or the text
    true/1/yes/on or false/0/no/off/"" (any case). Raises ValidationError (400 invalid_dry_run) on anything else."""
    if raw is None or isinstance(raw, bool):
        return bool(raw)
    value = str(raw).strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValidationError(
        f"dry_run must be true or false; got {str(raw)[:20]!r}.", code="invalid_dry_run", hint="Use dry_run=true."
    )


def parse_dry_run(request: Request) -> bool:
    """`dry_run` from the query string or the body (dry_run_value). Raises ValidationError on a non-boolean."""
    raw: Any = request.query_params.get("dry_run")
    if raw is None:
        data = request.data
        raw = data.get("dry_run") if hasattr(data, "get") else None
    return dry_run_value(raw)


@extend_schema_field(OpenApiTypes.BOOL)
class DryRunField(serializers.Field):
    """`dry_run` in an input serializer: read by dry_run_value, so a JSON boolean, "true"/"1"/"false" and the
    query parameter mean the same on every paid endpoint (the view still reads it with Meter.from_request)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("help_text", "true: answer the price and whether it is covered; charge and store nothing.")
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> bool:
        return dry_run_value(data)

    def to_representation(self, value: Any) -> bool:
        return bool(value)


class IdempotencyKeyReused(ExoGraphError):
    """The Idempotency-Key was first used for a different request (method, path, query or body)."""

    status, code = 422, "idempotency_key_reused"
    hint = "Send a new Idempotency-Key for a new request; reuse a key only to retry the identical request."


def _feed(digest: Any, value: Any) -> None:
    """Add one parsed value to the digest, unambiguously (type tag and length before each part)."""
    if hasattr(value, "chunks") and hasattr(value, "name"):  # an uploaded file: its name and bytes
        digest.update(b"F")
        _feed(digest, str(value.name))
        for chunk in value.chunks():
            digest.update(chunk)
        value.seek(0)
        return
    if isinstance(value, dict) or hasattr(value, "lists"):
        items = value.lists() if hasattr(value, "lists") else value.items()
        pairs = sorted(((str(k), v) for k, v in items), key=lambda pair: pair[0])
        digest.update(b"D%d:" % len(pairs))
        for key, item in pairs:
            _feed(digest, key)
            _feed(digest, item)
        return
    if isinstance(value, list | tuple):
        digest.update(b"L%d:" % len(value))
        for item in value:
            _feed(digest, item)
        return
    tag = b"S" if isinstance(value, str) else type(value).__name__.encode()[:8]
    raw = str(value).encode("utf-8", "surrogatepass")
    digest.update(tag + b"%d:" % len(raw) + raw)


def request_fingerprint(request: Request) -> str:
    """sha256 of what makes a request the same request: method, path, query and the parsed body.

    The parsed body, not its bytes, so a retry of the same JSON or form (another multipart
    boundary, keys in another order) matches; files count by name and content.
    """
    digest = hashlib.sha256()
    _feed(digest, [request.method or "", request.path])
    _feed(digest, request.query_params)
    _feed(digest, request.data)
    return digest.hexdigest()


def parse_idempotency_key(request: Request) -> str | None:
    """The Idempotency-Key header, if any. Raises ValidationError if it is empty, too long or unprintable."""
    raw = request.headers.get(IDEMPOTENCY_HEADER)
    if raw is None:
        return None
    return _check_key(raw)


class Meter:
    """One metered request: what it charged, and its Idempotency-Key bookkeeping."""

    def __init__(
        self, *, account: User, endpoint: str, dry_run: bool, idempotency_key: str | None, fingerprint: str = ""
    ) -> None:
        self.account = account
        self.endpoint = endpoint
        self.dry_run = dry_run
        self.idempotency_key = idempotency_key
        self.fingerprint = fingerprint
        self.charge_key = f"{endpoint}:{uuid.uuid4().hex}"
        self.credits_charged = 0  # charges plus credits reserved by holds
        self.credits_held = 0
        self.balance: int | None = None
        self._charge_keys: list[str] = []
        self._holds: list[Hold] = []

    @classmethod
    def from_request(cls, request: Request, *, endpoint: str) -> Meter:
        dry_run = parse_dry_run(request)
        key = parse_idempotency_key(request)
        return cls(
            account=actor_of(request),
            endpoint=endpoint,
            dry_run=dry_run,
            idempotency_key=key,
            fingerprint=request_fingerprint(request) if key is not None and not dry_run else "",
        )

    # --- dry run ---------------------------------------------------------------------

    def quote_response(
        self, *, action: str, units: int = 1, max_cost: int | None = None, extra: dict[str, Any] | None = None
    ) -> Response:
        """The dry-run answer: what it would cost and whether the real call would be allowed to spend it (the
        balance and the API key's monthly cap, decided as the charge decides them); when not covered, `refusal`
        is the error the real call would answer. Changes nothing."""
        quote = credits_quote(account=self.account, action=action, units=units, max_cost=max_cost)
        body = quote_out(quote)
        body.update(extra or {})
        return Response(body, status=200)

    # --- spending (call these from perform) ------------------------------------------

    def charge(self, *, action: str, units: int = 1, max_cost: int | None = None, reference: str = "") -> ChargeResult:
        """Charge for this request (once: the key is this request's). Raises InsufficientCredits (402)."""
        key = self.charge_key if not self._charge_keys else f"{self.charge_key}:{len(self._charge_keys)}"
        result = credits_charge(
            account=self.account,
            action=action,
            units=units,
            idempotency_key=key,
            reference=reference or self.endpoint,
            max_cost=max_cost,
        )
        self._charge_keys.append(key)
        self.credits_charged += result.credits_charged
        self.balance = result.balance
        return result

    def hold(self, *, amount: int, reference: str = "") -> Hold:
        """Reserve credits for long work (research). Raises InsufficientCredits (402)."""
        key = self.charge_key if not self._holds else f"{self.charge_key}:hold{len(self._holds)}"
        hold = credits_hold(
            account=self.account, amount=amount, idempotency_key=key, reference=reference or self.endpoint
        )
        self._holds.append(hold)
        self.credits_charged += int(hold.amount)
        self.credits_held += int(hold.amount)
        self.balance = credit_balance(account=self.account)
        return hold

    # --- running ------------------------------------------------------------------------

    def _undo(self) -> None:
        for key in self._charge_keys:
            try:
                credits_refund(account=self.account, charge_key=key, reason=f"{self.endpoint} failed")
            except NotFound:
                pass  # the charge was rolled back with the caller's transaction
        for hold in self._holds:
            if Hold.objects.filter(pk=hold.pk).exists():
                credits_release(hold=hold, reason=f"{self.endpoint} failed")

    def _execute(self, perform: Perform) -> Response:
        try:
            data, status = perform(self)
        except BaseException:
            self._undo()
            raise
        body = dict(data)
        body["credits_charged"] = self.credits_charged
        if self.credits_held:
            body["credits_held"] = self.credits_held  # reserved, captured as the work proceeds
        body["balance"] = self.balance if self.balance is not None else credit_balance(account=self.account)
        return Response(body, status=status)

    def _claim(self) -> tuple[IdempotentRequest, bool]:
        """Claim (account, key, endpoint), or find the request that holds it. Returns (row, ours)."""
        deadline = time.monotonic() + settings.BILLING_IDEMPOTENCY_WAIT_SECONDS
        lookup = {"user": self.account, "key": self.idempotency_key, "endpoint": self.endpoint}
        while True:
            try:
                with transaction.atomic():
                    return IdempotentRequest.objects.create(**lookup, fingerprint=self.fingerprint), True
            except IntegrityError:
                pass
            row = IdempotentRequest.objects.filter(**lookup).first()
            if row is None:
                continue  # the first request failed and gave the key back: claim it
            if row.fingerprint and self.fingerprint and row.fingerprint != self.fingerprint:
                raise IdempotencyKeyReused(
                    f"The Idempotency-Key {self.idempotency_key!r} was already used for a different request "
                    "(another method, path, query or body).",
                    extra={"idempotency_key": self.idempotency_key},
                )
            if row.status == IdempotencyStatus.COMPLETE:
                return row, False
            if _claim_dead(row):
                settled = self._settle_dead_claim(row)
                if settled is None:
                    continue  # nothing was charged: the claim was given back, claim it
                return settled, False
            if time.monotonic() > deadline:
                raise _in_progress("A request with this Idempotency-Key is still being processed.")
            time.sleep(0.02)

    def _settle_dead_claim(self, row: IdempotentRequest) -> IdempotentRequest | None:
        """The outcome of a claim whose process died: None (given back: it charged nothing), the stored refund
        outcome (its charge was refunded), else 409 while its charge waits for the sweep."""
        charge_key = f"{self.endpoint}:{row.pk.hex}"
        charge = CreditEntry.objects.filter(
            idempotency_key=ledger_key("charge", self.account.pk, charge_key), kind=EntryKind.CHARGE
        ).first()
        stale = row.modified < timezone.now() - timedelta(seconds=settings.BILLING_IDEMPOTENCY_STALE_SECONDS)
        if charge is None or stale:
            # Nothing charged (it died before, or the charge rolled back with its transaction); or, past the
            # stale bound, a kept charge whose answer was lost: the key runs again, as it always did.
            _claim_delete(row)
            logger.warning("idempotency claim %s of a dead request given back (charged: %s)", row.pk, bool(charge))
            return None
        if not CreditEntry.objects.filter(idempotency_key=f"refund:{charge.pk}").exists():
            raise _in_progress(
                "The request with this Idempotency-Key was interrupted; its charge is being settled.",
                retry_after=max(1, int(settings.LEASE_SWEEP_SECONDS)),
            )
        body = error_body(
            "request_interrupted",
            "The request with this Idempotency-Key was interrupted on our side before it answered; "
            f"its charge of {-charge.amount} credits was refunded.",
            "Send the request again with a new Idempotency-Key to run it again.",
            {"credits_refunded": -charge.amount, "idempotency_key": self.idempotency_key},
        )
        content = JSONRenderer().render(body).decode("utf-8")
        IdempotentRequest.objects.filter(pk=row.pk, status=IdempotencyStatus.IN_PROGRESS).update(
            status=IdempotencyStatus.COMPLETE, response_status=503, response_body=content, modified=timezone.now()
        )
        Lease.objects.filter(kind=IDEMPOTENCY_LEASE, subject_id=str(row.pk)).delete()
        logger.warning("idempotency claim %s of a dead request: its refund is the stored answer", row.pk)
        row.refresh_from_db()
        return row

    def run(self, perform: Perform) -> HttpResponseBase:
        """Run the metered work once per Idempotency-Key and answer with credits_charged and balance."""
        if self.dry_run:
            raise RuntimeError("answer dry runs with quote_response() before run()")
        if self.idempotency_key is None:
            return self._execute(perform)
        row, ours = self._claim()
        if not ours:
            replay = HttpResponse(row.response_body, status=row.response_status, content_type="application/json")
            replay["Idempotent-Replayed"] = "true"
            return replay
        self.charge_key = f"{self.endpoint}:{row.pk.hex}"
        # The claim's heartbeat: a retry sees within the lease ttl (at once on this host) that this process died.
        with lease_hold(kind=IDEMPOTENCY_LEASE, subject_id=str(row.pk)):
            try:
                response = self._execute(perform)
            except BaseException:
                IdempotentRequest.objects.filter(pk=row.pk).delete()  # errors are not stored: the key may be retried
                raise
            content = JSONRenderer().render(response.data).decode("utf-8")
            row.status = IdempotencyStatus.COMPLETE
            row.response_status = response.status_code
            row.response_body = content
            row.save(update_fields=["status", "response_status", "response_body", "modified"])
        return HttpResponse(content, status=response.status_code, content_type="application/json")


def _in_progress(message: str, *, retry_after: int = 2) -> Conflict:
    return Conflict(
        message,
        code="idempotency_in_progress",
        hint=f"Retry in {retry_after} s (Retry-After) to get its answer.",
        extra={"retry_after": retry_after},
        headers={"Retry-After": str(retry_after)},
    )


def _claim_dead(row: IdempotentRequest) -> bool:
    """True when the process running an in-progress claim is gone: its lease expired or names a dead pid on
    this host, or no lease was taken for longer than a lease lasts (it died between claiming and leasing)."""
    lease = Lease.objects.filter(kind=IDEMPOTENCY_LEASE, subject_id=str(row.pk)).first()
    now = timezone.now()
    if lease is None:
        return row.created < now - timedelta(seconds=float(settings.LEASE_TTL_SECONDS))
    return lease_expired(kind=IDEMPOTENCY_LEASE, subject_id=str(row.pk))


def _claim_delete(row: IdempotentRequest) -> None:
    IdempotentRequest.objects.filter(pk=row.pk, status=IdempotencyStatus.IN_PROGRESS).delete()
    Lease.objects.filter(kind=IDEMPOTENCY_LEASE, subject_id=str(row.pk)).delete()


def metered_response(
    request: Request,
    *,
    endpoint: str,
    action: str,
    perform: Perform,
    units: int = 1,
    max_cost: int | None = None,
    quote_extra: dict[str, Any] | None = None,
) -> HttpResponseBase:
    """Dry run → quote; otherwise charge `action` × units, then perform (refunded if perform fails)."""
    meter = Meter.from_request(request, endpoint=endpoint)
    if meter.dry_run:
        return meter.quote_response(action=action, units=units, max_cost=max_cost, extra=quote_extra)

    def charged(m: Meter) -> tuple[dict[str, Any], int]:
        m.charge(action=action, units=units, max_cost=max_cost)
        return perform(m)

    return meter.run(charged)
