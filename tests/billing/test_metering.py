"""Metered REST endpoints: dry_run quotes, credits_charged/balance, Idempotency-Key replays."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from billing.models import CreditEntry, EntryKind, IdempotentRequest
from billing.services import credit_balance
from tests.billing.conftest import assert_ledger_whole, run_concurrently
from tests.factories import UserFactory

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.billing.metered_urls")]

CHAT = "/api/v1/test/chat/"
UPLOAD = "/api/v1/test/upload/"


def charges(user):  # type: ignore[no-untyped-def]
    return CreditEntry.objects.filter(account__user=user, kind=EntryKind.CHARGE)


def test_metered_response_carries_credits_charged_and_balance(alice, alice_client, fund):
    fund(alice, 10)
    response = alice_client.post(CHAT, {"message": "hi"}, format="json")
    assert response.status_code == 201
    body = response.json()
    assert body["credits_charged"] == 3 and body["balance"] == 7 and body["echo"] == "hi"
    assert credit_balance(account=alice) == 7


@pytest.mark.parametrize("where", ["query", "body"])
def test_dry_run_quotes_and_changes_nothing(alice, alice_client, fund, where):
    fund(alice, 10)
    if where == "query":
        response = alice_client.post(f"{UPLOAD}?dry_run=true", {"pages": 7}, format="json")
    else:
        response = alice_client.post(UPLOAD, {"pages": 7, "dry_run": True}, format="json")
    assert response.status_code == 200
    body = response.json()
    assert body.pop("refusal")["code"] == "insufficient_credits"
    assert body == {"dry_run": True, "credits_needed": 12, "balance": 10, "covered": False, "pages": 7}
    assert credit_balance(account=alice) == 10 and not charges(alice).exists()
    chat = alice_client.post(f"{CHAT}?dry_run=1", {}, format="json").json()
    assert chat == {"dry_run": True, "credits_needed": 3, "balance": 10, "covered": True}


def test_bad_dry_run_value_is_400(alice_client):
    response = alice_client.post(f"{CHAT}?dry_run=maybe", {}, format="json")
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_dry_run"


def test_insufficient_balance_is_402_envelope(alice, alice_client, fund):
    fund(alice, 2)
    response = alice_client.post(CHAT, {"message": "hi"}, format="json")
    assert response.status_code == 402
    error = response.json()["error"]
    assert error["code"] == "insufficient_credits" and error["needed"] == 3 and error["balance"] == 2
    assert "ask an administrator" in error["hint"]  # no Stripe here: checkout would answer 503


def test_failure_after_charge_is_refunded_and_not_stored(alice, alice_client, fund):
    fund(alice, 10)
    response = alice_client.post(f"{CHAT}?fail=1", {}, format="json", HTTP_IDEMPOTENCY_KEY="k1")
    assert response.status_code == 400 and response.json()["error"]["code"] == "model_failed"
    assert credit_balance(account=alice) == 10
    assert not IdempotentRequest.objects.exists()
    retry = alice_client.post(CHAT, {}, format="json", HTTP_IDEMPOTENCY_KEY="k1")  # the same key works again
    assert retry.status_code == 201 and retry.json()["balance"] == 7
    assert_ledger_whole(alice)


def test_retry_with_same_key_returns_first_response_verbatim(alice, alice_client, fund):
    fund(alice, 10)
    first = alice_client.post(CHAT, {"message": "hi"}, format="json", HTTP_IDEMPOTENCY_KEY="abc")
    again = alice_client.post(CHAT, {"message": "hi"}, format="json", HTTP_IDEMPOTENCY_KEY="abc")
    assert again.status_code == first.status_code == 201
    assert again.content == first.content and again["Idempotent-Replayed"] == "true"
    assert charges(alice).count() == 1 and credit_balance(account=alice) == 7
    other = alice_client.post(UPLOAD, {"pages": 1}, format="json", HTTP_IDEMPOTENCY_KEY="abc")  # other endpoint
    assert other.status_code == 201 and credit_balance(account=alice) == 1


def test_reused_idempotency_key_with_other_body_is_422(alice, alice_client, fund):
    fund(alice, 10)
    first = alice_client.post(CHAT, {"message": "hi", "model": "snap"}, format="json", HTTP_IDEMPOTENCY_KEY="k-7")
    assert first.status_code == 201
    other = alice_client.post(CHAT, {"message": "bye", "model": "snap"}, format="json", HTTP_IDEMPOTENCY_KEY="k-7")
    assert other.status_code == 422, other.content
    error = other.json()["error"]
    assert error["code"] == "idempotency_key_reused" and "'k-7'" in error["message"]
    assert "new Idempotency-Key" in error["hint"]
    assert alice_client.post(f"{CHAT}?fail=1", {"message": "hi", "model": "snap"}, format="json",
                             HTTP_IDEMPOTENCY_KEY="k-7").status_code == 422  # another query string  # fmt: skip
    # The same request again (keys in another order) is a retry: the first answer, verbatim.
    again = alice_client.post(CHAT, {"model": "snap", "message": "hi"}, format="json", HTTP_IDEMPOTENCY_KEY="k-7")
    assert again.status_code == 201 and again.content == first.content and again["Idempotent-Replayed"] == "true"
    assert charges(alice).count() == 1 and credit_balance(account=alice) == 7
    assert_ledger_whole(alice)


def test_reused_idempotency_key_with_another_file_is_422(alice, alice_client, fund):
    from django.core.files.uploadedfile import SimpleUploadedFile

    fund(alice, 20)

    def upload(content: bytes):  # type: ignore[no-untyped-def]
        file = SimpleUploadedFile("paper.pdf", content, content_type="application/pdf")
        return alice_client.post(UPLOAD, {"pages": "1", "file": file}, format="multipart", HTTP_IDEMPOTENCY_KEY="up")

    first = upload(b"%PDF-1.7 first")
    assert first.status_code == 201
    assert upload(b"%PDF-1.7 second").status_code == 422
    again = upload(b"%PDF-1.7 first")
    assert again.status_code == 201 and again.content == first.content
    assert charges(alice).count() == 1 and credit_balance(account=alice) == 14


def test_keys_are_per_account(alice, bob, alice_client, bob_client, fund):
    fund(alice, 10)
    fund(bob, 10)
    alice_client.post(CHAT, {}, format="json", HTTP_IDEMPOTENCY_KEY="shared")
    response = bob_client.post(CHAT, {}, format="json", HTTP_IDEMPOTENCY_KEY="shared")
    assert response.status_code == 201 and "Idempotent-Replayed" not in response
    assert credit_balance(account=bob) == 7


def test_bad_idempotency_key_is_400(alice_client):
    response = alice_client.post(CHAT, {}, format="json", HTTP_IDEMPOTENCY_KEY="x" * 300)
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_idempotency_key"


def test_charge_key_can_be_refunded_later(alice, alice_client, fund):
    from billing.services import credits_refund

    fund(alice, 10)
    body = alice_client.post(UPLOAD, {"pages": 2}, format="json").json()
    assert body["credits_charged"] == 7 and body["balance"] == 3
    credits_refund(account=alice, charge_key=body["charge_key"], reason="ingest failed")
    assert credit_balance(account=alice) == 10


@pytest.mark.django_db(transaction=True)
def test_same_key_20_times_concurrently_one_charge_20_identical_answers(fund, api_key_for, settings):
    settings.BILLING_IDEMPOTENCY_WAIT_SECONDS = 30  # every retry waits for the first answer (2 s by default)
    user = UserFactory()
    fund(user, 100)
    auth = f"Bearer {api_key_for(user)}"

    def post(i: int):  # type: ignore[no-untyped-def]
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=auth, HTTP_IDEMPOTENCY_KEY="message-42")
        return client.post(CHAT, {"message": "hello"}, format="json")

    responses = [r for _, r in run_concurrently(post, 20, workers=20)]
    assert {r.status_code for r in responses} == {201}
    assert len({r.content for r in responses}) == 1
    assert responses[0].json()["credits_charged"] == 3 and responses[0].json()["balance"] == 97
    assert charges(user).count() == 1 and credit_balance(account=user) == 97
    assert_ledger_whole(user)


def test_research_hold_is_reported_and_released_on_failure(alice, alice_client, fund):
    fund(alice, 100)
    quote = alice_client.post("/api/v1/test/research/?dry_run=true", {"budget_credits": 40}, format="json").json()
    assert quote["credits_needed"] == 40 and quote["covered"] is True
    failed = alice_client.post("/api/v1/test/research/?fail=1", {"budget_credits": 40}, format="json")
    assert failed.status_code == 400 and credit_balance(account=alice) == 100
    body = alice_client.post("/api/v1/test/research/", {"budget_credits": 40}, format="json").json()
    assert body["credits_charged"] == 40 and body["credits_held"] == 40 and body["balance"] == 60
    assert_ledger_whole(alice)


def test_old_idempotency_records_are_purged(alice, alice_client, fund, settings):
    from datetime import timedelta

    from django.utils import timezone

    from billing.tasks import idempotency_records_purge_task

    fund(alice, 10)
    alice_client.post(CHAT, {}, format="json", HTTP_IDEMPOTENCY_KEY="old")
    alice_client.post(CHAT, {}, format="json", HTTP_IDEMPOTENCY_KEY="new")
    IdempotentRequest.objects.filter(key="old").update(
        modified=timezone.now() - timedelta(seconds=settings.BILLING_IDEMPOTENCY_RETENTION_SECONDS + 1)
    )
    assert idempotency_records_purge_task.delay().get() == 1
    assert list(IdempotentRequest.objects.values_list("key", flat=True)) == ["new"]


# --- claims left by a dead process (issue 23 §4) -------------------------------------------------------------


def _dead_claim(user, key: str, *, pid_alive: bool = False):  # type: ignore[no-untyped-def]
    """An in-progress claim of test.chat whose lease names a process of this host (dead unless pid_alive)."""
    import os
    import subprocess
    import sys
    import uuid
    from datetime import timedelta

    from django.utils import timezone

    from billing.metering import IDEMPOTENCY_LEASE
    from exograph.core.leases import HOST
    from exograph.core.models import Lease

    if pid_alive:
        pid = os.getpid()
        holder = f"{HOST}:{pid}"
    else:
        gone = subprocess.Popen([sys.executable, "-c", "pass"])  # noqa: S603
        gone.wait()
        holder = f"{HOST}:{gone.pid}"
    row = IdempotentRequest.objects.create(user=user, key=key, endpoint="test.chat")
    now = timezone.now()
    Lease.objects.create(
        kind=IDEMPOTENCY_LEASE,
        subject_id=str(row.pk),
        holder=holder,
        token=uuid.uuid4(),
        expires_at=now + timedelta(seconds=30),  # not expired: only the dead holder gives it away
        heartbeat_at=now,
    )
    return row


def _charge_of(user, row) -> None:  # type: ignore[no-untyped-def]
    from billing.services import credits_charge

    credits_charge(account=user, action="chat.snap", idempotency_key=f"test.chat:{row.pk.hex}", reference="chat")


def test_a_dead_claim_that_charged_nothing_is_taken_over_at_once(alice, alice_client, fund):
    fund(alice, 10)
    _dead_claim(alice, "k-dead")  # the web process died before charging
    retry = alice_client.post(CHAT, {"message": "hi"}, format="json", HTTP_IDEMPOTENCY_KEY="k-dead")
    assert retry.status_code == 201 and retry.json()["balance"] == 7
    assert charges(alice).count() == 1
    again = alice_client.post(CHAT, {"message": "hi"}, format="json", HTTP_IDEMPOTENCY_KEY="k-dead")
    assert again.content == retry.content and again["Idempotent-Replayed"] == "true"
    assert_ledger_whole(alice)


def test_a_dead_claim_whose_charge_was_refunded_answers_the_refund_not_a_wait(alice, alice_client, fund):
    from billing.services import credits_refund

    fund(alice, 10)
    row = _dead_claim(alice, "k-refunded")
    _charge_of(alice, row)
    pending = alice_client.post(CHAT, {"message": "hi"}, format="json", HTTP_IDEMPOTENCY_KEY="k-refunded")
    # Charged, not refunded yet: the sweep settles it soon; answered at once with when to come back.
    assert pending.status_code == 409 and pending.json()["error"]["code"] == "idempotency_in_progress"
    assert int(pending["Retry-After"]) >= 1
    credits_refund(account=alice, charge_key=f"test.chat:{row.pk.hex}", reason="the answer was interrupted")
    retry = alice_client.post(CHAT, {"message": "hi"}, format="json", HTTP_IDEMPOTENCY_KEY="k-refunded")
    assert retry.status_code == 503, retry.json()
    error = retry.json()["error"]
    assert error["code"] == "request_interrupted" and error["credits_refunded"] == 3
    again = alice_client.post(CHAT, {"message": "hi"}, format="json", HTTP_IDEMPOTENCY_KEY="k-refunded")
    assert again.content == retry.content and again["Idempotent-Replayed"] == "true"
    assert charges(alice).count() == 1 and credit_balance(account=alice) == 10  # never charged twice
    assert_ledger_whole(alice)


def test_a_retry_while_the_first_runs_is_409_with_retry_after(alice, alice_client, fund, settings):
    settings.BILLING_IDEMPOTENCY_WAIT_SECONDS = 0.1
    fund(alice, 10)
    _dead_claim(alice, "k-live", pid_alive=True)  # held by a live process (this one)
    retry = alice_client.post(CHAT, {"message": "hi"}, format="json", HTTP_IDEMPOTENCY_KEY="k-live")
    assert retry.status_code == 409 and retry.json()["error"]["code"] == "idempotency_in_progress"
    assert retry["Retry-After"] == "2" and not charges(alice).exists()


def test_a_claim_whose_heartbeat_stopped_is_dead(alice, alice_client, fund):
    from datetime import timedelta

    from django.utils import timezone

    from billing.metering import IDEMPOTENCY_LEASE
    from exograph.core.models import Lease

    fund(alice, 10)
    row = _dead_claim(alice, "k-expired", pid_alive=True)
    Lease.objects.filter(kind=IDEMPOTENCY_LEASE, subject_id=str(row.pk)).update(
        holder="another-host:1", expires_at=timezone.now() - timedelta(seconds=1)
    )  # a process on another machine whose renewals stopped
    retry = alice_client.post(CHAT, {"message": "hi"}, format="json", HTTP_IDEMPOTENCY_KEY="k-expired")
    assert retry.status_code == 201 and charges(alice).count() == 1
    assert not Lease.objects.filter(kind=IDEMPOTENCY_LEASE).exists()  # the retry's own lease let go with its answer
