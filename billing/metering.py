"""The HTTP side of paid endpoints: `dry_run`, `Idempotency-Key`, and the stored answer a retry gets back.

Money is not here. Each metered use case is one service that takes an idempotency key and quotes, charges or
holds, does the work, and refunds or releases, in one place (documents.services.document_upload and
document_retry, chat.metered.chat_message_send_metered, research.services.research_session_create); its
`*_quote` service answers a dry run with the decision the charge takes (balance, the API key's monthly cap,
limits). A paid REST view reads the request with `Meter`, then calls one of the two:

    from billing.metering import Meter

    def post(self, request):
        meter = Meter.from_request(request, endpoint="documents.upload")   # 400 on a bad header/flag
        prepared = document_upload_prepare(actor=meter.account, ...)        # validate, count pages
        if meter.dry_run:
            return Response(upload_quote_out(document_upload_quote(actor=meter.account, prepared=prepared)))
        return meter.run(lambda key: upload_out(document_upload(actor=meter.account, prepared=prepared,
                                                                idempotency_key=key)))

`meter.run(work)` calls `work(key)` at most once per Idempotency-Key and answers its (JSON body, status).
`key` is the money key of this request, the one the service charges or holds under: `<endpoint>:<claim id>`
for a claimed Idempotency-Key (a dead claim is settled by looking its charge up), a fresh
`<endpoint>:<uuid>` without the header. Web forms reach the same services with their form token as the
Idempotency-Key (billing/web.py); tasks call the services with keys derived from their ids.

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
same key may be retried after fixing the cause (the service refunded or released what it took).
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

from billing.models import CreditEntry, EntryKind, IdempotencyStatus, IdempotentRequest
from billing.services.ledger import _check_key, ledger_key
from exograph.accounts.models import User
from exograph.core.api import actor_of, error_body
from exograph.core.errors import Conflict, ExoGraphError, ValidationError
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

# work(charge_key) -> (JSON-able body, HTTP status): the use case, called by Meter.run at most once per key.
Work = Callable[[str], tuple[dict[str, Any], int]]


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
    """One paid request as HTTP sees it: its dry_run flag, its Idempotency-Key, and the money key its service
    charges under. It charges nothing itself."""

    def __init__(
        self, *, account: User, endpoint: str, dry_run: bool, idempotency_key: str | None, fingerprint: str = ""
    ) -> None:
        self.account = account
        self.endpoint = endpoint
        self.dry_run = dry_run
        self.idempotency_key = idempotency_key
        self.fingerprint = fingerprint
        self.charge_key = f"{endpoint}:{uuid.uuid4().hex}"

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

    def run(self, work: Work) -> HttpResponseBase:
        """Answer `work(charge_key)`'s (body, status) once per Idempotency-Key; a retry gets the stored answer.
        If work raises, nothing is stored (its service refunded what it took) and the key may be sent again."""
        if self.dry_run:
            raise RuntimeError("answer dry runs with the use case's *_quote service before run()")
        if self.idempotency_key is None:
            body, status = work(self.charge_key)
            return Response(body, status=status)
        row, ours = self._claim()
        if not ours:
            replay = HttpResponse(row.response_body, status=row.response_status, content_type="application/json")
            replay["Idempotent-Replayed"] = "true"
            return replay
        self.charge_key = f"{self.endpoint}:{row.pk.hex}"
        # The claim's heartbeat: a retry sees within the lease ttl (at once on this host) that this process died.
        with lease_hold(kind=IDEMPOTENCY_LEASE, subject_id=str(row.pk)):
            try:
                body, status = work(self.charge_key)
                content = JSONRenderer().render(body).decode("utf-8")
            except BaseException:
                IdempotentRequest.objects.filter(pk=row.pk).delete()  # errors are not stored: the key may be retried
                raise
            row.status = IdempotencyStatus.COMPLETE
            row.response_status = status
            row.response_body = content
            row.save(update_fields=["status", "response_status", "response_body", "modified"])
        return HttpResponse(content, status=status, content_type="application/json")


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
