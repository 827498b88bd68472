"""Signup credits wait for a verified email; earnings are paid only for queries from verified accounts."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from django.core import mail
from django.core.management import call_command
from django.test import Client

from billing.models import CreditEntry, EntryKind
from billing.services import credit_balance
from exograph.accounts.models import User
from exograph.core.scope import Scope
from exograph.graphs.services import entities_search, graph_create
from tests.graphs.conftest import QUANTUM_ENTITIES, QUANTUM_TEXTS, write_doc  # noqa: F401  (fixture)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("drop_graph_stores")]

PASSWORD = "a-very-long-pw-1"
LINK = re.compile(r"https?://\S+/account/verify/[^/\s]+/[^/\s]+/")


def _sign_up(email: str) -> tuple[Client, User]:
    client = Client()
    response = client.post("/signup/", {"email": email, "password": PASSWORD, "password_confirm": PASSWORD})
    assert response.status_code == 302
    return client, User.objects.get(email=email)


def _link_sent_to(email: str) -> str:
    sent = [m for m in mail.outbox if m.to == [email]]
    assert sent, f"no email to {email}"
    found = LINK.search(sent[-1].body)
    assert found, sent[-1].body
    return urlsplit(found.group(0)).path


def test_signup_credits_come_only_with_the_emailed_link_and_only_once(settings, django_capture_on_commit_callbacks):
    settings.BILLING_SIGNUP_CREDITS = 100
    with django_capture_on_commit_callbacks(execute=True):
        client, dora = _sign_up("dora@example.com")
    assert credit_balance(account=dora) == 0 and not dora.email_verified
    dashboard = client.get("/")
    assert dashboard.status_code == 200 and b"Send the link again" in dashboard.content
    link = _link_sent_to("dora@example.com")
    assert client.get(link).status_code == 302
    assert client.get(link).status_code == 302  # a second click just confirms
    dora.refresh_from_db()
    assert dora.email_verified and credit_balance(account=dora) == 100
    assert CreditEntry.objects.filter(account__user=dora, kind=EntryKind.SIGNUP_GRANT).count() == 1
    assert b"Send the link again" not in client.get("/").content


def test_a_tampered_or_someone_elses_link_verifies_nothing(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        _, dora = _sign_up("dora@example.com")
        _, erin = _sign_up("erin@example.com")
    dora_link = _link_sent_to("dora@example.com")
    erin_link = _link_sent_to("erin@example.com")
    prefix, dora_uid, dora_token, _ = dora_link.rsplit("/", 3)
    _, erin_uid, _, _ = erin_link.rsplit("/", 3)
    tampered = Client().get(f"{prefix}/{dora_uid}/{dora_token[:-2]}xx/")
    assert tampered.status_code == 400 and b"invalid or has expired" in tampered.content
    assert Client().get(f"{prefix}/{erin_uid}/{dora_token}/").status_code == 400  # dora's token for erin
    assert Client().get(f"{prefix}/not-base64!/{dora_token}/").status_code == 400
    for user in (dora, erin):
        user.refresh_from_db()
        assert not user.email_verified and credit_balance(account=user) == 0


def test_unverified_account_logs_in_and_can_resend_the_link_once_a_minute(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        _sign_up("dora@example.com")
    client = Client()
    assert client.post("/login/", {"username": "dora@example.com", "password": PASSWORD}).status_code == 302
    before = len(mail.outbox)
    with django_capture_on_commit_callbacks(execute=True):
        resent = client.post("/account/verify/resend/", follow=True)
    assert resent.status_code == 200 and b"We sent a new link" in resent.content
    assert len(mail.outbox) == before + 1
    with django_capture_on_commit_callbacks(execute=True):
        again = client.post("/account/verify/resend/", follow=True)
    assert b"less than a minute ago" in again.content and len(mail.outbox) == before + 1
    assert client.get(_link_sent_to("dora@example.com")).status_code == 302
    assert User.objects.get(email="dora@example.com").email_verified


def test_create_account_command_makes_a_verified_account_with_its_signup_credits(settings):
    settings.BILLING_SIGNUP_CREDITS = 100
    call_command("create_account", "--email", "ops@example.com", "--password", "a-long-enough-pass")
    ops = User.objects.get(email="ops@example.com")
    assert ops.email_verified and credit_balance(account=ops) == 100
    assert not mail.outbox


def test_earnings_are_paid_only_for_queries_from_verified_accounts(
    alice,
    bob,
    settings,
    write_doc,  # noqa: F811  (the imported fixture)
    django_capture_on_commit_callbacks,
):
    settings.BILLING_EARNING_CREDITS = 1
    graph = graph_create(actor=alice, name="W", scope=Scope.WORLD)
    write_doc(graph, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES)
    with django_capture_on_commit_callbacks(execute=True):
        _, farmer = _sign_up("farmer@example.com")  # unverified
        assert entities_search(actor=farmer, query="qubit", scope=Scope.WORLD)
    assert credit_balance(account=alice) == 0
    with django_capture_on_commit_callbacks(execute=True):
        assert entities_search(actor=bob, query="qubit", scope=Scope.WORLD)  # a verified customer
    assert credit_balance(account=alice) == 1


def test_a_verified_users_address_is_never_shown_for_a_wrong_link(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        client, dora = _sign_up("dora@example.com")
    link = _link_sent_to("dora@example.com")
    assert client.get(link).status_code == 302
    prefix, dora_uid, _, _ = link.rsplit("/", 3)
    # A stranger who guesses the (sequential) id of a verified account, with any token.
    probe = Client().get(f"{prefix}/{dora_uid}/anything/", follow=True)
    assert probe.status_code == 400 and b"invalid or has expired" in probe.content
    assert b"dora@example.com" not in probe.content


def test_the_right_link_again_confirms_without_the_address_for_anonymous_visitors(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        client, _ = _sign_up("dora@example.com")
    link = _link_sent_to("dora@example.com")
    assert client.get(link).status_code == 302
    again = Client().get(link, follow=True)  # a mail scanner, or the person on another device
    assert again.status_code == 200 and b"is verified" in again.content
    assert b"dora@example.com" not in again.content


def test_wrong_verification_links_are_throttled_per_address(settings, django_capture_on_commit_callbacks):
    settings.ANON_THROTTLES = {
        **settings.ANON_THROTTLES,
        "email_link": {"per_window": 3, "window_seconds": 3600, "per_day": 20},
    }
    with django_capture_on_commit_callbacks(execute=True):
        _, dora = _sign_up("dora@example.com")
    link = _link_sent_to("dora@example.com")
    prefix, dora_uid, _, _ = link.rsplit("/", 3)
    prober = Client(REMOTE_ADDR="203.0.113.21")
    for n in range(3):
        assert prober.get(f"{prefix}/{dora_uid}/guess-{n}/").status_code == 400
    refused = prober.get(link)  # past the limit even a right link waits: guessing would learn when it hits
    assert refused.status_code == 429 and 1 <= int(refused["Retry-After"]) <= 3600
    dora.refresh_from_db()
    assert not dora.email_verified
    assert Client(REMOTE_ADDR="198.51.100.22").get(link).status_code == 302  # another address is not affected
