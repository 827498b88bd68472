"""The signup grant is once per email address, not per account: deleting the account and signing up again with
the same address (however it is written) gets no second grant."""

from __future__ import annotations

import pytest
from django.core import mail

from billing.models import CreditEntry, EntryKind
from billing.services import credit_balance, credits_grant_signup
from billing.services.ledger import credits_grant
from exograph.accounts.services import account_delete, user_create, user_email_mark_verified
from exograph.core.addresses import email_canonical

pytestmark = pytest.mark.django_db

PASSWORD = "a-very-long-pw-1"


def _verified(email: str):  # type: ignore[no-untyped-def]
    user = user_create(email=email, password=PASSWORD)
    return user_email_mark_verified(user=user)


def _grants() -> int:
    return CreditEntry.objects.filter(kind=EntryKind.SIGNUP_GRANT).count()


def test_signing_up_again_after_deleting_the_account_gets_no_second_grant(settings):
    settings.BILLING_SIGNUP_CREDITS = 100
    dora = _verified("dora@example.com")
    assert credit_balance(account=dora) == 100
    account_delete(actor=dora, user=dora)
    again = _verified("dora@example.com")
    assert credit_balance(account=again) == 0
    assert _grants() == 1


@pytest.mark.parametrize("variant", ["Dora@Example.com ", "dora+credits@example.com", "DORA+x+y@EXAMPLE.COM"])
def test_the_same_address_written_differently_gets_no_second_grant(settings, variant):
    settings.BILLING_SIGNUP_CREDITS = 100
    dora = _verified("dora@example.com")
    account_delete(actor=dora, user=dora)
    assert credit_balance(account=_verified(variant)) == 0
    assert _grants() == 1


def test_gmail_ignores_dots_and_googlemail_is_gmail(settings):
    settings.BILLING_SIGNUP_CREDITS = 100
    first = _verified("dora.smith@gmail.com")
    account_delete(actor=first, user=first)
    assert credit_balance(account=_verified("DoraSmith+2@googlemail.com")) == 0
    assert credit_balance(account=_verified("dora.smith@example.com")) == 100  # dots count elsewhere


def test_canonical_address_rule():
    assert email_canonical("  Dora.Smith+News@GoogleMail.COM ") == "dorasmith@gmail.com"
    assert email_canonical("dora.smith+news@example.com") == "dora.smith@example.com"
    assert email_canonical("+only@example.com") == "+only@example.com"  # nothing before the tag: kept as written


def test_an_account_granted_under_the_old_per_account_key_is_not_granted_again(settings, alice):
    settings.BILLING_SIGNUP_CREDITS = 100
    before = credit_balance(account=alice)
    credits_grant(
        account=alice, amount=100, kind=EntryKind.SIGNUP_GRANT, key=f"signup:{alice.pk}", reference="welcome credits"
    )
    credits_grant_signup(account=alice)  # e.g. a second click on the verification link
    assert credit_balance(account=alice) == before + 100


def test_the_verification_email_promises_credits_only_to_an_address_that_never_had_them(
    settings, django_capture_on_commit_callbacks
):
    settings.BILLING_SIGNUP_CREDITS = 100
    with django_capture_on_commit_callbacks(execute=True):
        dora = user_create(email="dora@example.com", password=PASSWORD)
    assert "100 free credits" in mail.outbox[-1].body
    user_email_mark_verified(user=dora)
    account_delete(actor=dora, user=dora)
    with django_capture_on_commit_callbacks(execute=True):
        user_create(email="dora@example.com", password=PASSWORD)
    assert "free credits" not in mail.outbox[-1].body
