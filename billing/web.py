"""Metering for web forms that cost credits (upload a document, start research): a double submit charges once.

Each rendered form carries a token (`FormTokenField`, a hidden field generated when the form is rendered). The
view runs its paid use case through `metered_form_run`, which is the REST `Meter` with the key
``web:<token>:<digest of the form>``: a second POST of the same form (a double click, a resent request, two at
once) gets the first one's outcome instead of running and charging again. The digest makes the key the form's
content too, so one rendered form may still send different requests (documents.js posts each dropped file
through the same form, and the back button brings back a form with its old token): each distinct one runs
once. A POST without a token (a script, an old page) runs once per request, as before.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass
from typing import Any

from django import forms
from django.http import HttpRequest

from billing.metering import Meter, Work, _feed
from billing.services.ledger import _check_key
from exograph.accounts.models import User

FORM_TOKEN_FIELD = "form_token"  # noqa: S105 - a field name, not a secret
_NOT_CONTENT = {FORM_TOKEN_FIELD, "csrfmiddlewaretoken"}


def form_token() -> str:
    """A new per-form token (random; it only has to be unique per account and form)."""
    return uuid.uuid4().hex


class FormTokenField(forms.CharField):
    """The hidden per-form token: a fresh one each time an unbound form is rendered."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("max_length", 64)
        kwargs.setdefault("widget", forms.HiddenInput)
        kwargs.setdefault("initial", form_token)
        super().__init__(**kwargs)


def form_fingerprint(request: HttpRequest) -> str:
    """sha256 of what makes a form POST the same request: path, the fields (not the token or the CSRF token)
    and the files by name and bytes."""
    digest = hashlib.sha256()
    _feed(digest, [request.method or "", request.path])
    fields = {key: values for key, values in request.POST.lists() if key not in _NOT_CONTENT}
    _feed(digest, fields)
    _feed(digest, dict(request.FILES.lists()))
    return digest.hexdigest()


@dataclass(frozen=True)
class FormOutcome:
    """What the metered work answered (as the REST endpoint would: credits_charged and balance added), and
    whether it is the stored outcome of an earlier submit of the same form."""

    body: dict[str, Any]
    status: int
    replayed: bool


def metered_form_run(request: HttpRequest, *, account: User, endpoint: str, work: Work) -> FormOutcome:
    """Run `work(charge_key)` once per (form token, form content), as `Meter.run` runs it once per
    Idempotency-Key; `work` calls the use case's service with that key, as the REST view does.

    Raises what work raises (its service refunded what it took; the token may be sent again) and Conflict (409)
    when the same submit is still running after BILLING_IDEMPOTENCY_WAIT_SECONDS."""
    token = (request.POST.get(FORM_TOKEN_FIELD) or "").strip()
    fingerprint = form_fingerprint(request) if token else ""
    key = _check_key(f"web:{token[:64]}:{fingerprint[:32]}") if token else None
    meter = Meter(account=account, endpoint=endpoint, dry_run=False, idempotency_key=key, fingerprint=fingerprint)
    response = meter.run(work)
    data = getattr(response, "data", None)
    body = dict(data) if isinstance(data, dict) else json.loads(getattr(response, "content", b"{}"))
    return FormOutcome(body=body, status=response.status_code, replayed=response.get("Idempotent-Replayed") == "true")
