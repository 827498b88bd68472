"""The web upload shows its price before anything is charged: the first POST answers a quote (pages, credits,
balance after: the REST dry_run's numbers) and a target-graph picker chooses where it goes; Confirm uploads."""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings

from billing.models import CreditEntry, EntryKind
from billing.services import credit_balance, credits_grant_admin
from exograph.core.scope import Scope
from exograph.documents.models import Document
from exograph.graphs.services import graph_create, graph_default_for_user
from tests.documents.conftest import web_upload_quote
from tests.graphs import conftest as graph_fixtures

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("offline_extractor")]
_drop_graph_stores = graph_fixtures._drop_graph_stores

TEXT = b"# Porto\n\nThe Douro river runs through Porto before it reaches the Atlantic.\n" * 40


@pytest.fixture
def offline_extractor():  # type: ignore[no-untyped-def]
    with override_settings(DOCUMENTS_EXTRACTOR="offline"):
        yield


def _charges(user) -> int:  # type: ignore[no-untyped-def]
    return CreditEntry.objects.filter(account__user=user, kind=EntryKind.CHARGE).count()


def _text(html: str, element_id: str) -> str:
    match = re.search(rf'id="{element_id}"[^>]*>(.*?)</', html, flags=re.S)
    assert match, element_id
    return re.sub(r"<[^>]+>", "", match.group(1)).strip()


def test_the_first_submit_quotes_as_the_rest_dry_run_and_charges_nothing(client, alice, alice_client) -> None:  # type: ignore[no-untyped-def]
    credits_grant_admin(account=alice, amount=100, actor=None, note="tests")
    client.force_login(alice)
    response, fields = web_upload_quote(
        client, {"file": SimpleUploadedFile("porto.md", TEXT), "graph_scope": "private"}
    )
    assert response.status_code == 200 and fields is not None
    html = response.content.decode()
    rest = alice_client.post(
        "/api/v1/documents/", {"text": TEXT.decode(), "title": "porto", "dry_run": True}, format="json"
    ).json()
    pages = rest["pages"]
    assert _text(html, "quote-pages") == f"{pages} page{'s' if pages != 1 else ''}"
    assert _text(html, "quote-credits") == str(rest["credits_needed"])
    assert _text(html, "quote-balance-after").startswith(str(100 - rest["credits_needed"]))
    assert f"Confirm upload · {rest['credits_needed']} credits" in html
    assert Document.objects.filter(owner=alice).count() == 0 and _charges(alice) == 0
    assert credit_balance(account=alice) == 100

    confirmed = client.post("/documents/", fields, follow=True)
    document = Document.objects.get(owner=alice)
    assert document.credits_charged == rest["credits_needed"] and _charges(alice) == 1
    assert f"porto.md: {pages} page" in confirmed.content.decode()
    # The file kept for Confirm is gone: a stale Confirm of another form cannot upload it again.
    fields["form_token"] = "0" * 32
    client.post("/documents/", fields)
    assert Document.objects.filter(owner=alice).count() == 1 and _charges(alice) == 1
    assert "confirmation has expired" in client.get("/documents/").content.decode()


def test_the_picker_offers_my_graphs_with_my_default_preselected_and_uploads_there(client, alice, bob) -> None:  # type: ignore[no-untyped-def]
    credits_grant_admin(account=alice, amount=100, actor=None, note="tests")
    default = graph_default_for_user(actor=alice, scope=Scope.PRIVATE)
    research = graph_create(actor=alice, name="Research notes", scope=Scope.PRIVATE)
    foreign = graph_create(actor=bob, name="Bob's secrets", scope=Scope.PRIVATE)
    client.force_login(alice)
    html = client.get("/documents/").content.decode()
    picker = re.search(r'<select name="graph_id".*?</select>', html, flags=re.S).group(0)  # type: ignore[union-attr]
    assert re.search(rf'<option value="{default.id}" selected>', picker)
    assert f'<option value="{research.id}">Research notes (Private)</option>' in picker
    assert foreign.id not in picker and "Bob" not in picker

    form = {"file": SimpleUploadedFile("porto.md", TEXT), "graph_scope": "private", "graph_id": research.id}
    response, fields = web_upload_quote(client, form)
    assert fields is not None and fields["graph_id"] == research.id
    assert (
        "Research notes" in _text(response.content.decode(), "upload-quote")
        or "Research notes" in response.content.decode()
    )
    client.post("/documents/", fields)
    assert Document.objects.get(owner=alice).graph_id == research.id

    # Another account's graph id is refused at the quote (as the REST upload refuses it), nothing stashed or charged.
    form = {"file": SimpleUploadedFile("x.md", TEXT), "graph_scope": "private", "graph_id": foreign.id}
    response, fields = web_upload_quote(client, form)
    assert fields is None and _charges(alice) == 1


def test_a_quote_the_balance_does_not_cover_says_why_and_cannot_be_confirmed(client, alice) -> None:  # type: ignore[no-untyped-def]
    client.force_login(alice)  # no credits
    response, fields = web_upload_quote(
        client, {"file": SimpleUploadedFile("porto.md", TEXT), "graph_scope": "private"}
    )
    html = response.content.decode()
    assert fields is not None and 'id="quote-refusal"' in html and "the balance is 0" in html
    assert re.search(r'<button type="submit" id="upload-confirm" disabled', html)
    assert _charges(alice) == 0 and Document.objects.count() == 0


def test_a_stash_is_the_owners_alone(client, alice, bob) -> None:  # type: ignore[no-untyped-def]
    credits_grant_admin(account=alice, amount=100, actor=None, note="tests")
    credits_grant_admin(account=bob, amount=100, actor=None, note="tests")
    client.force_login(alice)
    _, fields = web_upload_quote(client, {"file": SimpleUploadedFile("porto.md", TEXT), "graph_scope": "private"})
    assert fields is not None
    client.force_login(bob)
    client.post("/documents/", fields)
    assert Document.objects.count() == 0 and _charges(bob) == 0
    client.force_login(alice)
    client.post("/documents/", fields)
    assert Document.objects.filter(owner=alice).count() == 1


def test_an_empty_file_is_refused_once_saying_what_the_api_says(client, alice) -> None:  # type: ignore[no-untyped-def]
    """A 0-byte file gets the upload's own empty_file words (as REST answers), not Django's 'The submitted file is
    empty.' followed by 'Choose a file to upload.', which told someone who had chosen a file to choose one."""
    credits_grant_admin(account=alice, amount=50, actor=None, note="tests")
    client.force_login(alice)
    response = client.post(
        "/documents/", {"file": SimpleUploadedFile("harbour-minutes.txt", b""), "graph_scope": "private"}, follow=True
    )
    html = response.content.decode()
    assert "Choose a file to upload" not in html and "The submitted file is empty" not in html
    assert "The file is empty (0 bytes)." in html and "Upload a file with content" in html
    assert Document.objects.filter(owner=alice).count() == 0 and _charges(alice) == 0
