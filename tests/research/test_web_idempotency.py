"""The research start form is idempotent: a double submit of one rendered form starts one session, one hold."""

from __future__ import annotations

import re

import pytest
from django.test import Client, override_settings

from billing.models import CreditEntry, EntryKind
from billing.services import credit_balance
from research.models import ResearchSession
from tests.billing.conftest import run_concurrently
from tests.factories import UserFactory


def _token(client: Client) -> str:
    page = client.get("/research/").content.decode()
    match = re.search(r'name="form_token" value="([0-9a-f]{32})"', page)
    assert match, "the research form carries a hidden per-form token"
    return match.group(1)


def _post(client: Client, token: str, query: str = "surface codes"):  # type: ignore[no-untyped-def]
    form = {"query": query, "budget_credits": 40, "model": "snap", "graph_scope": "private", "sources": ["local"],
            "form_token": token}  # fmt: skip
    return client.post("/research/", form)


def _holds(user) -> int:  # type: ignore[no-untyped-def]
    return CreditEntry.objects.filter(account__user=user, kind=EntryKind.HOLD).count()


@pytest.mark.django_db
def test_the_same_research_form_posted_twice_starts_one_session(alice, fund) -> None:  # type: ignore[no-untyped-def]
    fund(alice, 100)
    client = Client()
    client.force_login(alice)
    token = _token(client)
    first, second = _post(client, token), _post(client, token)
    session = ResearchSession.objects.get()
    assert first.status_code == second.status_code == 302
    assert first["Location"] == second["Location"] == f"/research/{session.id}/"
    assert _holds(alice) == 1 and credit_balance(account=alice) == 60
    # The same rendered form sent with another topic (the back button) is a new session.
    _post(client, token, query="logical qubits")
    assert ResearchSession.objects.count() == 2 and credit_balance(account=alice) == 20


@pytest.mark.django_db(transaction=True)
@override_settings(BILLING_IDEMPOTENCY_WAIT_SECONDS=30)
def test_a_concurrent_double_submit_of_the_research_form_holds_once(fund, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr("research.services.sessions._queue", lambda *args: None)  # no pipeline: the hold stays whole
    user = UserFactory()
    fund(user, 100)
    login = Client()
    login.force_login(user)
    token = _token(login)

    def post(i: int):  # type: ignore[no-untyped-def]
        client = Client()
        client.cookies = login.cookies
        return _post(client, token)

    results = run_concurrently(post, 2, workers=2)
    assert [kind for kind, _ in results] == ["ok", "ok"], results
    assert len({response["Location"] for _, response in results}) == 1
    assert ResearchSession.objects.filter(owner=user).count() == 1 and _holds(user) == 1
    assert credit_balance(account=user) == 60
