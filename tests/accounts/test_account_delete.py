"""Deleting an account: graphs (and their World Graph contributions) go, the ledger stays, detached and anonymised."""

from __future__ import annotations

import base64
import re

import pytest
from django.core import mail
from django.db.models import Sum
from django.test import Client
from rest_framework.test import APIClient

from billing.models import (
    CheckoutSession,
    CreditAccount,
    CreditEntry,
    EntryKind,
    Hold,
    HoldStatus,
    StripeEvent,
    StripeEventStatus,
)
from billing.services import checkout_session_create, credit_balance, credits_grant_admin, credits_hold
from exograph.accounts.models import ApiKey, User
from exograph.accounts.services import account_delete, api_key_create
from exograph.core import falkor
from exograph.core.errors import PermissionDenied, ServiceUnavailable
from exograph.core.scope import Scope
from exograph.documents.models import Document
from exograph.graphs import store
from exograph.graphs.models import Graph
from exograph.graphs.services import graph_create
from tests.billing.conftest import completed_session, event, fake_stripe, sign  # noqa: F401  (fixture)
from tests.documents.conftest import fixture_bytes

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("drop_graph_stores")]

PASSWORD = "a-very-long-pw-1"
SMALL_PDF = "pdf/sf_pdflatex-4-pages.pdf"


def _sign_up_and_verify(email: str, capture) -> tuple[Client, User]:  # type: ignore[no-untyped-def]
    client = Client()
    with capture(execute=True):
        response = client.post("/signup/", {"email": email, "password": PASSWORD, "password_confirm": PASSWORD})
    assert response.status_code == 302
    link = re.search(r"https?://\S+(/account/verify/\S+/)", mail.outbox[-1].body)
    assert link and client.get(link.group(1)).status_code == 302
    return client, User.objects.get(email=email, email_verified_at__isnull=False)


def test_deleted_account_keeps_an_anonymous_ledger_and_leaves_nothing_in_the_world_graph(
    bob,
    falkordb,
    fake_stripe,  # noqa: F811  (the imported fixture)
    django_capture_on_commit_callbacks,
):
    client, dora = _sign_up_and_verify("dora@example.com", django_capture_on_commit_callbacks)
    assert credit_balance(account=dora) > 0  # the signup credits
    credits_grant_admin(account=dora, amount=1000, actor=None, note="tests")
    key = api_key_create(actor=dora, name="laptop").secret
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    with django_capture_on_commit_callbacks(execute=True):
        upload = api.post(
            "/api/v1/documents/",
            {
                "file_content_base64": base64.b64encode(fixture_bytes(SMALL_PDF)).decode(),
                "filename": "notes.pdf",
                "graph_scope": "world",
            },
            format="json",
        )
    assert upload.status_code == 201, upload.json()
    assert api.get(f"/api/v1/documents/{upload.json()['id']}/").json()["status"] == "processed"
    world_before = store.store_counts("exo:world")["entities"]
    assert world_before > 0
    hold = credits_hold(account=dora, amount=50, idempotency_key="research-1")
    checkout = checkout_session_create(actor=dora, pack="pack_500")
    account = CreditAccount.objects.get(user=dora)
    anonymous_id = account.anonymous_id
    fields = ["pk", "account_id", "kind", "amount", "balance_after", "held_change", "reference", "idempotency_key"]
    snapshot = list(CreditEntry.objects.filter(account=account).order_by("pk").values_list(*fields))
    entries_before = {row[0] for row in snapshot}
    assert len(entries_before) >= 4  # signup grant, admin grant, upload charge, hold

    wrong = client.post("/account/delete/", {"password": "not-my-password"})
    assert wrong.status_code == 400 and User.objects.filter(pk=dora.pk).exists()
    assert client.get("/account/delete/").status_code == 200
    stores = [graph.store_name for graph in Graph.objects.filter(owner=dora)]
    assert stores and set(stores) <= set(falkordb.list_graphs())
    with django_capture_on_commit_callbacks(execute=True):
        done = client.post("/account/delete/", {"password": PASSWORD})
    assert done.status_code == 302 and done["Location"] == "/login/"

    assert not User.objects.filter(email="dora@example.com").exists()
    assert client.get("/billing/").status_code == 302  # logged out ("/" is the public landing page)
    assert api.get("/api/v1/me/").status_code == 401 and not ApiKey.objects.filter(user_id=dora.pk).exists()
    assert not Graph.objects.filter(owner_id=dora.pk).exists()
    assert not Document.objects.filter(owner_id=dora.pk).exists()
    assert store.store_counts("exo:world")["entities"] == 0  # un-merged
    assert not set(stores) & set(falkordb.list_graphs())  # and its stores dropped
    # The ledger is all still there (nothing rewritten), detached from the person, under its stable anonymous id.
    account.refresh_from_db()
    assert account.user_id is None and account.anonymous_id == anonymous_id
    entries = CreditEntry.objects.filter(account=account)
    assert entries_before < set(entries.values_list("pk", flat=True))
    # Append-only: the entries written before are untouched; only new ones (release, closing) were added.
    assert list(CreditEntry.objects.filter(pk__in=entries_before).order_by("pk").values_list(*fields)) == snapshot
    assert account.balance == 0 and account.held == 0
    totals = entries.aggregate(balance=Sum("amount"), held=Sum("held_change"))
    assert totals == {"balance": 0, "held": 0}
    assert entries.filter(kind=EntryKind.RELEASE, hold=hold).exists()
    assert Hold.objects.get(pk=hold.pk).status == HoldStatus.CLOSED
    assert CheckoutSession.objects.get(pk=checkout.pk).account_id == account.pk
    assert not [ref for ref in entries.values_list("reference", flat=True) if "dora" in ref]
    assert "deleted account" in str(account)


def test_account_delete_is_refused_for_someone_elses_account(alice, charlie):
    with pytest.raises(PermissionDenied):
        account_delete(actor=charlie, user=alice)
    assert User.objects.filter(pk=alice.pk, is_active=True).exists()


def test_admin_deletes_accounts_through_the_service(alice, charlie):
    credits_grant_admin(account=charlie, amount=10, actor=None, note="tests")
    admin = User.objects.create_superuser("root@example.com", "a-long-admin-password")
    client = Client()
    client.force_login(admin)
    response = client.post(
        "/admin/accounts/user/", {"action": "delete_accounts", "_selected_action": [charlie.pk]}, follow=True
    )
    assert response.status_code == 200
    assert not User.objects.filter(pk=charlie.pk).exists() and User.objects.filter(pk=alice.pk).exists()
    detached = CreditAccount.objects.get(user__isnull=True)
    assert detached.balance == 0 and detached.entries.count() == 2  # the grant and the closing entry


def _deliver(client: Client, payload: str):  # type: ignore[no-untyped-def]
    return client.post(
        "/api/v1/billing/webhooks/stripe/",
        data=payload,
        content_type="application/json",
        HTTP_STRIPE_SIGNATURE=sign(payload),
    )


def test_stripe_events_after_the_account_is_deleted_are_ignored_not_failed(
    client,
    alice,
    fake_stripe,  # noqa: F811  (the imported fixture)
):
    paid = checkout_session_create(actor=alice, pack="pack_500")
    unpaid = checkout_session_create(actor=alice, pack="pack_500")
    completed = completed_session(paid.stripe_session_id, user=alice, payment_intent="pi_gone")
    assert _deliver(client, event("checkout.session.completed", completed)).status_code == 200
    account_delete(actor=alice, user=alice)
    refund = {"id": "ch_9", "object": "charge", "payment_intent": "pi_gone", "amount": 500, "amount_refunded": 500}
    late = completed_session(unpaid.stripe_session_id, user=alice)
    for payload in (event("charge.refunded", refund), event("checkout.session.completed", late)):
        assert _deliver(client, payload).status_code == 200
    statuses = list(StripeEvent.objects.order_by("created").values_list("status", flat=True))
    assert statuses == [StripeEventStatus.PROCESSED, StripeEventStatus.IGNORED, StripeEventStatus.IGNORED]
    assert CreditAccount.objects.get(user__isnull=True).balance == 0


def test_account_delete_with_the_graph_store_down_is_503_and_keeps_the_account_usable(alice, settings, tmp_path):
    graph = graph_create(actor=alice, name="Shared", scope=Scope.WORLD)
    credits_grant_admin(account=alice, amount=10, actor=None, note="tests")
    live = settings.FALKORDB_URL
    settings.FALKORDB_URL = f"unix://{tmp_path}/dead.sock"
    falkor._clients.clear()
    try:
        with pytest.raises(ServiceUnavailable):
            account_delete(actor=alice, user=alice)
    finally:
        settings.FALKORDB_URL = live
        falkor._clients.clear()
    alice.refresh_from_db()
    assert alice.is_active and Graph.objects.filter(pk=graph.pk).exists()
    assert CreditAccount.objects.get(user=alice).balance == 10


def test_a_user_deleted_outside_the_service_loses_its_graphs_and_closes_its_credit_account_too(
    alice, django_capture_on_commit_callbacks
):
    """One path for every deletion (the top layer's pre_delete receivers): a shell's user.delete() un-merges and drops
    the graphs and releases the holds, like account_delete (before, only the graphs went and the holds stayed open)."""
    graph = graph_create(actor=alice, name="Shared", scope=Scope.WORLD)
    credits_grant_admin(account=alice, amount=100, actor=None, note="tests")
    hold = credits_hold(account=alice, amount=40, idempotency_key="research-shell")
    account = CreditAccount.objects.get(user=alice)
    with django_capture_on_commit_callbacks(execute=True):
        alice.delete()
    assert not Graph.objects.filter(pk=graph.pk).exists()
    account.refresh_from_db()
    assert account.user_id is None and account.balance == 0 and account.held == 0
    assert Hold.objects.get(pk=hold.pk).status == HoldStatus.CLOSED
