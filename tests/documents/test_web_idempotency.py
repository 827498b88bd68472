"""The web upload form is idempotent: a double submit of one rendered form uploads and charges once."""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, override_settings

from billing.models import CreditEntry, EntryKind
from billing.services import credit_balance, credits_grant_admin
from exograph.documents.models import Document
from tests.billing.conftest import run_concurrently
from tests.documents.conftest import web_upload_quote
from tests.factories import UserFactory

TEXT = b"# Quillfeather\n\nThe Quillfeather Institute writes blind text for typesetters in Lisbon.\n"


def _token(client: Client) -> str:
    page = client.get("/documents/").content.decode()
    match = re.search(r'name="form_token" value="([0-9a-f]{32})"', page)
    assert match, "the upload form carries a hidden per-form token"
    return match.group(1)


def _confirm_fields(client: Client, token: str, *, name: str = "notes.md", content: bytes = TEXT) -> dict[str, str]:
    """The upload's first step (its quote): the Confirm form's fields, which carry the same form token."""
    form = {"file": SimpleUploadedFile(name, content), "graph_scope": "private", "form_token": token}
    response, fields = web_upload_quote(client, form)
    assert response.status_code == 200 and fields is not None and fields["form_token"] == token
    return fields


def _post(client: Client, fields: dict[str, str]):  # type: ignore[no-untyped-def]
    """Confirm: the step that uploads and charges."""
    return client.post("/documents/", fields)


def _charges(user) -> int:  # type: ignore[no-untyped-def]
    return CreditEntry.objects.filter(account__user=user, kind=EntryKind.CHARGE).count()


@pytest.mark.django_db
@override_settings(DOCUMENTS_EXTRACTOR="offline")
def test_the_same_upload_form_posted_twice_uploads_and_charges_once(alice) -> None:  # type: ignore[no-untyped-def]
    credits_grant_admin(account=alice, amount=100, actor=None, note="test funding")
    client = Client()
    client.force_login(alice)
    token = _token(client)
    assert token != _token(client)  # each rendering has its own
    fields = _confirm_fields(client, token)
    first, second = _post(client, fields), _post(client, fields)
    assert first.status_code == second.status_code == 302 and first["Location"] == second["Location"]
    assert Document.objects.filter(owner=alice).count() == 1 and _charges(alice) == 1
    assert credit_balance(account=alice) == 94  # 5 + 1 page, once
    assert "already uploaded by this form" in client.get("/documents/").content.decode()
    # Another file through the same rendered form (the back button brings it back) is its own upload.
    _post(
        client, _confirm_fields(client, token, name="other.md", content=TEXT + b"\nA second paragraph about Porto.\n")
    )
    assert Document.objects.filter(owner=alice).count() == 2 and _charges(alice) == 2


@pytest.mark.django_db(transaction=True)
@override_settings(DOCUMENTS_EXTRACTOR="offline", BILLING_IDEMPOTENCY_WAIT_SECONDS=30)
def test_a_concurrent_double_submit_of_the_upload_form_charges_once() -> None:
    user = UserFactory()
    credits_grant_admin(account=user, amount=100, actor=None, note="test funding")
    login = Client()
    login.force_login(user)
    token = _token(login)
    fields = _confirm_fields(login, token)
    cookies = login.cookies

    def post(i: int):  # type: ignore[no-untyped-def]
        client = Client()
        client.cookies = cookies
        return _post(client, fields)

    results = run_concurrently(post, 2, workers=2)
    assert [kind for kind, _ in results] == ["ok", "ok"], results
    assert {response.status_code for _, response in results} == {302}
    assert Document.objects.filter(owner=user).count() == 1 and _charges(user) == 1
    assert credit_balance(account=user) == 94
