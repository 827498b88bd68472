"""Backfill (issue 25 §5): manage.py graph_reextract re-extracts a graph's processed documents, free, with progress."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from billing.services import credit_balance, credits_grant_admin
from exograph.documents.extraction import Entity, Extraction, Mention
from exograph.documents.models import Document, DocumentStatus
from exograph.graphs import store
from exograph.graphs.models import Graph

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("drop_graph_stores")]

ARTICLE = (
    "# Acme Robotics\n\n"
    "Acme Robotics is a company founded by Jane Doe in Boston in 2019.\n\n"
    "The film stars Audrey Hepburn as Eliza Doolittle, and Acme Robotics paid $14 million for its rights.\n"
)


def _old_extractor(chunks):  # type: ignore[no-untyped-def]
    """What the keyphrase extractor wrote before: untyped fragments."""
    first = chunks[0].id
    return Extraction(
        entities=[Entity("film stars Audrey", "CONCEPT"), Entity("Acme Robotics", "CONCEPT")],
        mentions=[Mention(first, "film stars Audrey", "CONCEPT"), Mention(first, "Acme Robotics", "CONCEPT")],
    )


def _entities(graph: Graph) -> dict[str, str]:
    return {r[0]: r[1] for r in store.ro_query(graph.store_name, "MATCH (e:Entity) RETURN e.name, e.type")}


def test_graph_reextract_rewrites_old_extractions_for_free_with_progress(
    alice, alice_client, monkeypatch, django_capture_on_commit_callbacks
):  # type: ignore[no-untyped-def]
    credits_grant_admin(account=alice, amount=1000, actor=None, note="tests")
    monkeypatch.setattr("exograph.documents.services.stages.document_extract", _old_extractor)
    with django_capture_on_commit_callbacks(execute=True):
        response = alice_client.post("/api/v1/documents/", {"text": ARTICLE, "title": "Acme Robotics"}, format="json")
    assert response.status_code == 201, response.json()
    document = Document.objects.get(pk=response.json()["id"])
    assert document.status == DocumentStatus.PROCESSED
    graph = document.graph
    assert "film stars Audrey" in _entities(graph)
    monkeypatch.undo()
    balance = credit_balance(account=alice)
    out = StringIO()
    call_command("graph_reextract", graph.id, stdout=out)
    entities = _entities(graph)
    assert "film stars Audrey" not in entities
    assert entities["Jane Doe"] == "person" and entities["Boston"] == "location"
    assert entities["2019"] == "date" and entities["$14 million"] == "quantity"
    assert credit_balance(account=alice) == balance  # priced at nothing: the document was paid for once
    assert f"1/1 document {document.id}" in out.getvalue() and "0 credits charged" in out.getvalue()
    document.refresh_from_db()
    assert document.entity_count == len([n for n in entities if n])
    # the passages are the same, vectors included: vector search still finds the document
    assert store.ro_query(graph.store_name, "MATCH (c:Chunk) WHERE c.vkey IS NOT NULL RETURN count(c)")[0][0] >= 1
