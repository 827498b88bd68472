"""Password reset by email: an expiring, one-use link; the same answer whether or not the address has an account;
throttled per client address and per email address."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from django.core import mail
from django.test import Client
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from exograph.accounts.emails import password_reset_tokens
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

OLD = "correct-horse-battery-staple"  # UserFactory's
NEW = "a-brand-new-long-secret-9"
LINK = re.compile(r"https?://\S+/account/password/reset/[^/\s]+/[^/\s]+/")


def _ask(email: str, *, address: str = "203.0.113.40", capture=None):  # type: ignore[no-untyped-def]
    client = Client(REMOTE_ADDR=address)
    if capture is None:
        return client.post("/account/password/reset/", {"email": email})
    with capture(execute=True):
        return client.post("/account/password/reset/", {"email": email})


def _link(email: str) -> str:
    sent = [m for m in mail.outbox if m.to == [email]]
    assert sent, f"no email to {email}"
    found = LINK.search(sent[-1].body)
    assert found, sent[-1].body
    return urlsplit(found.group(0)).path


def _page(response) -> bytes:  # type: ignore[no-untyped-def]
    """A page without what differs on every request (CSP nonces, CSRF tokens)."""
    page = re.sub(rb'(nonce|value)="[^"]*"', b"", response.content)
    return re.sub(rb'"X-CSRFToken": "[^"]*"', b"", page)


def _logs_in(password: str, email: str = "dora@example.com") -> bool:
    response = Client(REMOTE_ADDR="198.51.100.41").post("/login/", {"username": email, "password": password})
    return response.status_code == 302


def test_the_login_page_offers_the_reset():
    page = Client().get("/login/")
    assert b"Forgot password?" in page.content and b'href="/account/password/reset/"' in page.content


def test_reset_by_the_emailed_link_then_the_link_is_spent(django_capture_on_commit_callbacks):
    UserFactory(email="dora@example.com")
    asked = _ask("Dora@Example.com ", capture=django_capture_on_commit_callbacks)
    assert asked.status_code == 302 and asked["Location"] == "/account/password/reset/sent/"
    link = _link("dora@example.com")
    client = Client()
    opened = client.get(link)  # the token moves into the session; the page's own URL no longer carries it
    assert opened.status_code == 302 and "set-password" in opened["Location"]
    form = client.get(opened["Location"])
    assert form.status_code == 200 and b"new_password1" in form.content
    done = client.post(opened["Location"], {"new_password1": NEW, "new_password2": NEW})
    assert done.status_code == 302 and done["Location"] == "/account/password/reset/done/"
    assert _logs_in(NEW) and not _logs_in(OLD)
    again = Client().get(link, follow=True)
    assert again.status_code == 200 and b"new_password1" not in again.content
    assert b"no longer valid" in again.content


def test_a_new_password_ends_a_login_lockout(settings, django_capture_on_commit_callbacks):
    settings.AXES_FAILURE_LIMIT = 2
    UserFactory(email="dora@example.com")
    for _ in range(2):
        Client(REMOTE_ADDR="203.0.113.46").post("/login/", {"username": "dora@example.com", "password": "wrong"})
    assert not _logs_in(OLD)  # locked out, even with the right password
    _ask("dora@example.com", capture=django_capture_on_commit_callbacks)
    client = Client()
    opened = client.get(_link("dora@example.com"))
    client.post(opened["Location"], {"new_password1": NEW, "new_password2": NEW})
    assert _logs_in(NEW)


def test_an_unknown_address_gets_the_same_answer_and_no_mail(django_capture_on_commit_callbacks):
    UserFactory(email="dora@example.com")
    known = _ask("dora@example.com", capture=django_capture_on_commit_callbacks)
    unknown = _ask("nobody@example.com", address="203.0.113.41", capture=django_capture_on_commit_callbacks)
    assert (known.status_code, known["Location"]) == (unknown.status_code, unknown["Location"])
    assert [m.to for m in mail.outbox] == [["dora@example.com"]]
    assert _page(Client().get(known["Location"])) == _page(Client().get(unknown["Location"]))


def test_an_expired_link_sets_nothing(settings):
    settings.ACCOUNTS_PASSWORD_RESET_SECONDS = 3600
    dora = UserFactory(email="dora@example.com")
    tokens = password_reset_tokens
    stale = tokens._make_token_with_timestamp(dora, tokens._num_seconds(tokens._now()) - 3601, tokens.secret)
    uid = urlsafe_base64_encode(force_bytes(dora.pk))
    expired = Client().get(f"/account/password/reset/{uid}/{stale}/")
    assert expired.status_code == 200 and b"no longer valid" in expired.content
    assert tokens.check_token(dora, tokens.make_token(dora))  # a fresh one works


def test_requests_are_throttled_per_client_address(settings):
    settings.ANON_THROTTLES = {
        **settings.ANON_THROTTLES,
        "password_reset": {"per_window": 2, "window_seconds": 3600, "per_day": 20},
    }
    for n in range(2):
        assert _ask(f"someone{n}@example.com").status_code == 302
    refused = _ask("someone9@example.com")
    assert refused.status_code == 429 and 1 <= int(refused["Retry-After"]) <= 3600
    assert b"Too many attempts" in refused.content
    assert _ask("someone9@example.com", address="198.51.100.42").status_code == 302


def test_mails_to_one_address_are_capped_whatever_the_client(settings, django_capture_on_commit_callbacks):
    settings.ANON_THROTTLES = {
        **settings.ANON_THROTTLES,
        "password_reset_email": {"per_window": 1, "window_seconds": 3600, "per_day": 10},
    }
    UserFactory(email="dora@example.com")
    first = _ask("dora@example.com", address="203.0.113.43", capture=django_capture_on_commit_callbacks)
    second = _ask("DORA@example.com", address="203.0.113.44", capture=django_capture_on_commit_callbacks)
    assert first.status_code == second.status_code == 302  # the same answer: nothing tells the cap was hit
    assert len(mail.outbox) == 1


def test_wrong_reset_links_are_throttled_per_client_address(settings):
    settings.ANON_THROTTLES = {
        **settings.ANON_THROTTLES,
        "email_link": {"per_window": 2, "window_seconds": 3600, "per_day": 20},
    }
    dora = UserFactory(email="dora@example.com")
    uid = urlsafe_base64_encode(force_bytes(dora.pk))
    prober = Client(REMOTE_ADDR="203.0.113.45")
    for n in range(2):
        assert b"no longer valid" in prober.get(f"/account/password/reset/{uid}/guess-{n}/").content
    assert prober.get(f"/account/password/reset/{uid}/guess-9/").status_code == 429
