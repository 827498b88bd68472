"""Isolation with data on both sides: alice and charlie each upload the same paper to a private graph
(so their documents, graphs and ledgers look alike); neither ever sees the other's."""

from __future__ import annotations

import base64

import pytest

from billing.models import CreditEntry
from billing.services import credits_grant_admin
from tests.documents.conftest import fixture_bytes

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("drop_graph_stores")]

URL = "/api/v1/documents/"
PAPER = "pdf/sf_pdflatex-4-pages.pdf"


def test_documents_and_ledgers_of_two_owners_of_the_same_paper_stay_apart(  # type: ignore[no-untyped-def]
    alice, charlie, alice_client, charlie_client, django_capture_on_commit_callbacks
) -> None:
    owners = {"alice": (alice, alice_client), "charlie": (charlie, charlie_client)}
    documents = {}
    for name, (user, client) in owners.items():
        credits_grant_admin(account=user, amount=500, actor=None, note=f"{name} test credits")
        payload = {"file_content_base64": base64.b64encode(fixture_bytes(PAPER)).decode(), "filename": f"{name}.pdf"}
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(URL, payload, format="json", headers={"Idempotency-Key": f"iso-{name}"})
        assert response.status_code in (200, 201, 202), response.content
        documents[name] = response.json()
    assert documents["alice"]["id"] != documents["charlie"]["id"]
    assert documents["alice"]["graph_id"] != documents["charlie"]["graph_id"]

    for name, (user, client) in owners.items():
        other = "charlie" if name == "alice" else "alice"
        mine, theirs = documents[name], documents[other]
        listed = client.get(URL).json()["results"]
        assert [d["id"] for d in listed] == [mine["id"]]
        assert other not in str(listed)
        assert client.get(f"{URL}{mine['id']}/").status_code == 200
        foreign = client.get(f"{URL}{theirs['id']}/")
        assert foreign.status_code == 404 and foreign.json()["error"]["code"] == "document_not_found"
        assert client.get(f"/api/v1/graphs/{theirs['graph_id']}/").status_code == 404

        ledger = client.get("/api/v1/billing/ledger").json()["results"]
        own_ids = set(CreditEntry.objects.filter(account__user=user).values_list("id", flat=True))
        assert len(ledger) >= 2  # the grant and the upload's charge
        assert {entry["id"] for entry in ledger} == own_ids
        assert other not in str(ledger) and theirs["id"] not in str(ledger)
