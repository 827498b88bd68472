"""The OpenAPI schema says what the API does: schemathesis against /api/v1/schema/ with a real key.

Every operation of the served schema is called in-process (WSGI) with generated requests, as
alice with a real API key; each answer must be no 5xx, carry a documented status and content
type, and match the documented response schema (errors included: the one error envelope).
Bounded: at most MAX_EXAMPLES generated requests per operation, plus the same operations with
the ids of alice's own objects and a few real uploads, so the 2xx shapes are checked too; then
MAX_NEGATIVE_EXAMPLES schema-violating requests per operation, which must get documented 4xx.
Runs in `make test` (marker `schema`; deselect with -m "not schema").
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from billing.services import credits_grant_admin, credits_hold
from exograph.accounts.models import ApiKey, User
from exograph.accounts.services import api_key_create
from exograph.core.scope import Scope
from exograph.graphs.services import graph_create
from tests.documents.conftest import fixture_bytes

pytestmark = [pytest.mark.schema, pytest.mark.django_db]

MAX_EXAMPLES = 20
MAX_SEEDED_EXAMPLES = 10  # per operation, with the ids of alice's own objects
MAX_NEGATIVE_EXAMPLES = 10
SMALL_PDF = "pdf/sf_pdflatex-4-pages.pdf"  # 4 pages: 9 credits
OTHER_PDF = "pdf/pm_naacl06-shinyama.pdf"  # 8 pages: 13 credits
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


class _Key:
    """alice's API key for the run; a new one when a generated DELETE /keys/{id}/ revoked it."""

    def __init__(self, user: User) -> None:
        self.user = user
        self._issue()

    def _issue(self) -> None:
        _revoke_all(self.user)
        issued = api_key_create(actor=self.user, name="schemathesis")
        self.key_id, self.secret = issued.key.id, issued.secret

    def headers(self) -> dict[str, str]:
        if not ApiKey.objects.filter(id=self.key_id, revoked_at__isnull=True).exists():
            self._issue()
        return {"Authorization": f"Bearer {self.secret}"}


def _revoke_all(user: User, *, keep: int | None = None) -> None:
    """Make room under the active-key limit (generated POST /keys/ calls fill it)."""
    ApiKey.objects.filter(user=user, revoked_at__isnull=True).exclude(id=keep).update(revoked_at=timezone.now())


def _run(
    operation: Any,
    key: _Key,
    failures: list[str],
    *,
    mode: GenerationMode = GenerationMode.POSITIVE,
    examples: int = MAX_EXAMPLES,
    **fixed: Any,
) -> None:
    strategy = operation.as_strategy(generation_mode=mode, **fixed)

    @given(case=strategy)
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    def check(case: Any) -> None:
        case.call_and_validate(headers=key.headers(), checks=CHECKS)

    try:
        check()
    except (Exception, BaseExceptionGroup) as exc:  # collect every operation's failure, then fail once with all of them
        failures.append(f"{operation.label} {mode.value}{' ' + str(fixed) if fixed else ''}:\n{exc}")


@pytest.fixture
def api_schema(alice: User, alice_key: str, settings) -> Iterator[Any]:  # type: ignore[no-untyped-def]
    # One account makes hundreds of calls here: lift its per-minute limit (the limiter still runs).
    settings.BILLING_PLANS = {name: {"per_minute": 100_000, "per_day": 1_000_000} for name in settings.BILLING_PLANS}
    settings.USE_STRIPE = False  # checkout answers its documented 503; no Stripe call
    # The requests run in this thread inside the test's transaction, as Django's test client runs
    # them: the WSGI handler must not close that connection at each request's start and end.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield schemathesis.openapi.from_wsgi(
            "/api/v1/schema/", get_wsgi_application(), headers={"Authorization": f"Bearer {alice_key}"}
        )
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def _seeded_ids(api_schema: Any, alice: User, auth: _Key) -> dict[str, Callable[[], dict[str, Any]]]:
    """Path parameters of alice's own objects, per path template (made when first needed)."""
    credits_grant_admin(account=alice, amount=500, actor=None, note="schemathesis")
    upload = api_schema["/api/v1/documents/"]["POST"]

    def graph() -> dict[str, Any]:
        made = graph_create(actor=alice, name=f"Schemathesis {uuid.uuid4().hex[:8]}", scope=Scope.PRIVATE)
        return {"graph_id": made.id}

    def hold() -> dict[str, Any]:
        made = credits_hold(account=alice, amount=5, idempotency_key=f"schemathesis-{uuid.uuid4().hex}")
        return {"hold_id": str(made.id)}

    def key() -> dict[str, Any]:
        _revoke_all(alice, keep=auth.key_id)
        return {"key_id": api_key_create(actor=alice, name="to revoke").key.id}

    def document() -> dict[str, Any]:
        # A pending document (its ingest task waits for a commit that never comes inside the test).
        body = {"file_content_base64": base64.b64encode(_pdf()).decode(), "filename": f"{uuid.uuid4().hex}.pdf"}
        response = upload.Case(media_type="application/json", body=body).call(headers=auth.headers())
        body = response.json()
        return {"document_id": body["id"] if response.status_code in (200, 201) else body["error"]["document_id"]}

    def research() -> dict[str, Any]:
        # A pending session (its pipeline waits for a commit that never comes inside the test).
        from research.services import research_session_create

        # Topped up each time: the generated calls before it spend alice's balance (how much depends on their order).
        credits_grant_admin(account=alice, amount=50, actor=None, note="schemathesis research budget")
        return {"session_id": str(research_session_create(actor=alice, query="schemathesis topic").id)}

    return {
        "/graphs/{graph_id}/": graph,
        "/graphs/{graph_id}/export/": graph,
        "/graphs/{graph_id}/merges/": graph,
        "/graphs/{graph_id}/import/": graph,
        "/research/{session_id}/": research,
        "/research/{session_id}/cancel/": research,
        "/research/{session_id}/export/": research,
        "/billing/holds/{hold_id}/": hold,
        "/keys/{key_id}/": key,
        "/documents/{document_id}/": document,
        "/documents/{document_id}/cancel/": document,
        "/documents/{document_id}/retry/": document,
    }


def _pdf() -> bytes:
    return fixture_bytes(SMALL_PDF)


def _explicit(api_schema: Any, key: _Key, failures: list[str], broke: str) -> None:
    """Requests a generator rarely makes: real uploads in each mode, replays, cancel/retry, checkout."""
    upload = api_schema["/api/v1/documents/"]["POST"]
    encoded = base64.b64encode(_pdf()).decode()
    idempotency = {"Idempotency-Key": uuid.uuid4().hex}
    multipart = {"file": fixture_bytes(OTHER_PDF), "filename": "b.pdf"}
    calls: list[tuple[int, Any, dict[str, Any]]] = [
        (200, upload, {"body": {"file_content_base64": encoded, "filename": "a.pdf", "dry_run": True}}),
        (201, upload, {"body": {"file_content_base64": encoded, "filename": "a.pdf"}, "headers": idempotency}),
        (201, upload, {"body": {"file_content_base64": encoded, "filename": "a.pdf"}, "headers": idempotency}),
        (200, upload, {"body": {"file_content_base64": encoded, "filename": "a.pdf"}}),  # unchanged
        (201, upload, {"body": multipart, "media_type": "multipart/form-data"}),
        (402, upload, {"body": {"file_content_base64": encoded, "filename": "c.pdf"}, "headers": {"X-API-Key": broke}}),
        (403, upload, {"body": {"file_path": "/etc/hostname"}}),
        # Stripe is off (the default): a valid pack answers the documented 503 purchases_disabled.
        (503, api_schema["/api/v1/billing/checkout/"]["POST"], {"body": {"pack": "pack_500"}}),
    ]
    for expected, operation, kwargs in calls:
        case = operation.Case(media_type=kwargs.get("media_type", "application/json"), body=kwargs["body"])
        headers = {**key.headers(), **kwargs.get("headers", {})}
        if "X-API-Key" in headers:
            headers.pop("Authorization")
        checks = CHECKS if expected < 500 else [c for c in CHECKS if c is not not_a_server_error]
        try:
            response = case.call_and_validate(headers=headers, checks=checks)
            if response.status_code != expected:
                failures.append(f"{operation.label}: expected {expected}, got {response.status_code}")
        except (Exception, BaseExceptionGroup) as exc:
            failures.append(f"{operation.label} {kwargs.get('media_type', '')}:\n{exc}")


def test_every_operation_conforms_to_the_schema_with_a_real_key(api_schema, alice, bob_key):
    key = _Key(alice)
    seeded = _seeded_ids(api_schema, alice, key)
    failures: list[str] = []
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) >= 20
    _explicit(api_schema, key, failures, broke=bob_key)
    for operation in operations:
        _run(operation, key, failures)
        for template, make in seeded.items():
            if operation.path.endswith(template):
                _run(operation, key, failures, examples=MAX_SEEDED_EXAMPLES, path_parameters=make())
    assert not failures, "\n\n".join(failures)


def test_invalid_requests_get_documented_errors_never_a_5xx(api_schema, alice):
    key = _Key(alice)
    failures: list[str] = []
    for result in api_schema.get_all_operations():
        _run(result.ok(), key, failures, mode=GenerationMode.NEGATIVE, examples=MAX_NEGATIVE_EXAMPLES)
    assert not failures, "\n\n".join(failures)
