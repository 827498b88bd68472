"""dry_run on the real paid endpoints: a quote takes the decision the charge takes (balance and the API key's
monthly cap), and every paid endpoint reads dry_run the same ways (JSON boolean, text, query parameter)."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from billing.services import credit_balance, credits_quote
from billing.services.caps import KeyCapReached, spending_key
from exograph.accounts.services import api_key_create
from tests.billing.conftest import assert_ledger_whole

pytestmark = pytest.mark.django_db

MESSAGES = "/api/v1/chat/messages/"
DOCUMENTS = "/api/v1/documents/"
RESEARCH = "/api/v1/research/"
# 3 credits (snap; ponder is charged as snap on the offline reader, billing.prices.chat_action)
CHAT_SNAP = {"message": "Which rivers feed the delta?", "model": "snap"}
TEXT_UPLOAD = {"text": "The delta is fed by two rivers.", "title": "Rivers"}  # 5 + 1 page = 6 credits
RESEARCH_40 = {"query": "How sediment builds a river delta", "budget_credits": 40}  # holds its budget: 40 credits
PAID = [(MESSAGES, CHAT_SNAP, 3), (DOCUMENTS, TEXT_UPLOAD, 6), (RESEARCH, RESEARCH_40, 40)]
PAID_IDS = ["chat", "upload", "research"]


def _client(user: Any, *, cap: int | None) -> APIClient:
    client = APIClient()
    secret = api_key_create(actor=user, name="agent", monthly_credit_cap=cap).secret
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


@pytest.mark.parametrize(("path", "body", "price"), PAID, ids=PAID_IDS)
def test_a_quote_past_the_keys_monthly_cap_is_not_covered_and_names_what_the_charge_answers(
    alice, fund, path, body, price
):
    fund(alice, 100)
    client = _client(alice, cap=price - 1)
    quote = client.post(path, {**body, "dry_run": True}, format="json")
    assert quote.status_code == 200, quote.content
    assert quote.json()["covered"] is False
    assert quote.json()["credits_needed"] == price and quote.json()["balance"] == 100
    real = client.post(path, body, format="json")
    assert real.status_code == 403
    # One decision: the quote's refusal is the real call's error, word for word.
    assert quote.json()["refusal"] == real.json()["error"]
    assert real.json()["error"]["code"] == "key_monthly_cap_reached"
    assert credit_balance(account=alice) == 100
    assert_ledger_whole(alice)


@pytest.mark.parametrize(("path", "body", "price"), PAID, ids=PAID_IDS)
def test_a_quote_within_the_cap_and_balance_is_covered_and_says_no_refusal(alice, fund, path, body, price):
    fund(alice, 100)
    quote = _client(alice, cap=price).post(path, {**body, "dry_run": True}, format="json").json()
    assert quote["covered"] is True and "refusal" not in quote


@pytest.mark.parametrize(("path", "body", "price"), PAID, ids=PAID_IDS)
def test_a_quote_past_the_balance_names_the_402_the_charge_answers(alice, fund, path, body, price):
    fund(alice, price - 1)
    client = _client(alice, cap=None)
    quote = client.post(path, {**body, "dry_run": True}, format="json").json()
    real = client.post(path, body, format="json")
    assert quote["covered"] is False and real.status_code == 402
    assert quote["refusal"] == real.json()["error"]


@pytest.mark.parametrize(("path", "body", "price"), PAID, ids=PAID_IDS)
def test_past_both_the_keys_cap_and_the_balance_the_quote_and_the_real_call_name_the_cap_first(
    alice, fund, path, body, price
):
    fund(alice, price - 1)
    client = _client(alice, cap=price - 2)
    quote = client.post(path, {**body, "dry_run": True}, format="json").json()
    real = client.post(path, body, format="json")
    assert real.status_code == 403 and quote["covered"] is False
    assert quote["refusal"] == real.json()["error"] and quote["refusal"]["code"] == "key_monthly_cap_reached"


def test_credits_quote_asks_the_keys_cap_as_the_charge_does(alice, fund):
    fund(alice, 100)
    key = api_key_create(actor=alice, name="agent", monthly_credit_cap=2).key
    with spending_key(key_id=key.pk, capped=True):
        quote = credits_quote(account=alice, action="chat.snap")
    assert (quote.cost, quote.balance, quote.covered) == (3, 100, False)
    assert isinstance(quote.refusal, KeyCapReached)
    assert credits_quote(account=alice, action="chat.snap").covered is True  # no key: the web UI


QUOTING = [(MESSAGES, CHAT_SNAP), (DOCUMENTS, TEXT_UPLOAD), (RESEARCH, RESEARCH_40)]
TRUE_FORMS = [
    ("json-true", {"dry_run": True}, ""),
    ("text-true", {"dry_run": "true"}, ""),
    ("text-1", {"dry_run": "1"}, ""),
    ("query", {}, "?dry_run=true"),
]


@pytest.mark.parametrize(("path", "body"), QUOTING, ids=PAID_IDS)
@pytest.mark.parametrize(("form", "extra", "query"), TRUE_FORMS, ids=[form[0] for form in TRUE_FORMS])
def test_every_quoting_endpoint_reads_dry_run_the_same_ways(alice, alice_client, fund, path, body, form, extra, query):
    fund(alice, 100)
    response = alice_client.post(path + query, {**body, **extra}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["dry_run"] is True
    assert credit_balance(account=alice) == 100


@pytest.mark.parametrize("path", [MESSAGES, DOCUMENTS, RESEARCH])
@pytest.mark.parametrize("value", [False, "false", "0"])
def test_dry_run_false_in_any_form_is_a_real_call_on_every_paid_endpoint(alice, alice_client, path, value):
    # No credits: the real call answers 402 (never a 400 about dry_run's type, never a quote).
    body = {MESSAGES: CHAT_SNAP, DOCUMENTS: TEXT_UPLOAD}.get(path, {"query": "rivers of the delta"})
    response = alice_client.post(path, {**body, "dry_run": value}, format="json")
    assert response.status_code == 402, response.content


@pytest.mark.parametrize("path", [MESSAGES, DOCUMENTS, RESEARCH])
def test_a_dry_run_that_is_no_boolean_is_the_same_400_on_every_paid_endpoint(alice, alice_client, path):
    body = {MESSAGES: CHAT_SNAP, DOCUMENTS: TEXT_UPLOAD}.get(path, {"query": "rivers of the delta"})
    response = alice_client.post(path, {**body, "dry_run": "perhaps"}, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_dry_run"


def test_a_covered_research_quote_is_the_hold_the_real_call_takes_and_holds_nothing(alice, fund):
    from billing.models import Hold
    from research.models import ResearchSession

    fund(alice, 100)
    client = _client(alice, cap=40)  # exactly the budget: covered
    quote = client.post(RESEARCH, {**RESEARCH_40, "dry_run": True}, format="json")
    assert quote.status_code == 200, quote.content
    assert quote.json() == {"dry_run": True, "credits_needed": 40, "balance": 100, "covered": True, "model": "snap"}
    assert not Hold.objects.exists() and not ResearchSession.objects.exists()
    assert credit_balance(account=alice) == 100
    real = client.post(RESEARCH, RESEARCH_40, format="json")
    assert real.status_code == 202, real.content
    assert real.json()["credits_held"] == quote.json()["credits_needed"] == Hold.objects.get().amount
    assert real.json()["balance"] == 60
    assert_ledger_whole(alice)


def _cancelled_upload(client: APIClient) -> str:
    """A text upload (6 credits) cancelled before processing: refunded, so its retry charges again."""
    document_id = str(client.post(DOCUMENTS, TEXT_UPLOAD, format="json").json()["id"])
    assert client.post(f"{DOCUMENTS}{document_id}/cancel/").status_code == 200
    return document_id


def test_a_retry_quote_past_the_keys_monthly_cap_names_what_the_retry_answers(alice, fund):
    fund(alice, 100)
    document_id = _cancelled_upload(_client(alice, cap=None))
    client = _client(alice, cap=5)  # the retry costs 6
    quote = client.post(f"{DOCUMENTS}{document_id}/retry/", {"dry_run": True}, format="json")
    assert quote.status_code == 200, quote.content
    assert (quote.json()["credits_needed"], quote.json()["covered"]) == (6, False)
    real = client.post(f"{DOCUMENTS}{document_id}/retry/")
    assert real.status_code == 403
    assert quote.json()["refusal"] == real.json()["error"]
    assert credit_balance(account=alice) == 100
    assert_ledger_whole(alice)


def test_a_retry_quote_of_a_document_the_retry_refuses_answers_the_retrys_409(alice, fund):
    # Defect (issue 24): the dry run quoted a price, covered, for a retry the real call refuses (409).
    from exograph.documents.models import DocumentBlob

    fund(alice, 100)
    client = _client(alice, cap=None)
    document_id = _cancelled_upload(client)
    DocumentBlob.objects.filter(document_id=document_id).delete()  # its file is no longer stored
    quote = client.post(f"{DOCUMENTS}{document_id}/retry/", {"dry_run": True}, format="json")
    real = client.post(f"{DOCUMENTS}{document_id}/retry/")
    assert real.status_code == 409 and real.json()["error"]["code"] == "document_file_gone"
    assert quote.status_code == 409 and quote.json() == real.json()
    assert credit_balance(account=alice) == 100
