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
    assert response.json() == {"dry_run": True, "credits_needed": 12, "balance": 10, "covered": False, "pages": 7}
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
    assert "checkout" in error["hint"]


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
def test_same_key_20_times_concurrently_one_charge_20_identical_answers(fund, api_key_for):
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
