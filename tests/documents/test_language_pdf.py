"""Text that is text, end to end on a real PDF (issue 25 §3): tracemonkey-pldi-09.pdf has a figure whose glyphs
the parser reads as text ('!"# $!"#%…'). Uploaded through the real pipeline, its figure passages are flagged on
their Chunk nodes and stay searchable, but no entity comes from them and chat evidence does not quote them."""

from __future__ import annotations

import base64

import pytest

from billing.services import credits_grant_admin
from exograph.chat.evidence import evidence_retrieve
from exograph.core.language import text_is_language
from exograph.core.scope import Scope
from exograph.documents.models import Document, DocumentStatus
from exograph.graphs import store
from tests.documents.conftest import fixture_bytes

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("drop_graph_stores")]


def test_a_real_pdf_figure_is_searchable_but_gives_no_entities_and_no_quotes(
    alice, alice_client, django_capture_on_commit_callbacks
):  # type: ignore[no-untyped-def]
    credits_grant_admin(account=alice, amount=1000, actor=None, note="tests")
    payload = {
        "file_content_base64": base64.b64encode(fixture_bytes("pdf/tracemonkey-pldi-09.pdf")).decode(),
        "filename": "tracemonkey.pdf",
    }
    with django_capture_on_commit_callbacks(execute=True):
        response = alice_client.post("/api/v1/documents/", payload, format="json")
    assert response.status_code == 201, response.json()
    document = Document.objects.get(pk=response.json()["id"])
    assert document.status == DocumentStatus.PROCESSED
    graph = document.graph
    chunks = {
        r[0]: (r[1], r[2])
        for r in store.ro_query(graph.store_name, "MATCH (c:Chunk) RETURN c.id, c.text, c.nonlanguage")
    }
    flagged = {cid for cid, (_text, nonlanguage) in chunks.items() if nonlanguage}
    assert flagged, "the figure passage is flagged"
    assert all(not text_is_language(chunks[cid][0]) for cid in flagged)
    glyphs = next(cid for cid in flagged if '!"#' in chunks[cid][0])
    # kept out of entity extraction: no entity is mentioned by a flagged passage, none is glyph debris
    mentioned = store.ro_query(
        graph.store_name, "MATCH (c:Chunk)-[:MENTIONS]->(e:Entity) WHERE c.nonlanguage RETURN count(e)"
    )
    assert mentioned[0][0] == 0
    names = {r[0] for r in store.ro_query(graph.store_name, "MATCH (e:Entity) RETURN e.name")}
    assert not names & {"B897", "TOED", "L5"} and not any('"#' in name for name in names)
    assert "TraceMonkey" in names
    # not out of search: the passage is in the vector index (a question near it finds it)
    from exograph.graphs.embeddings import chunk_embedding_text, get_embedder

    vector = get_embedder().embed([chunk_embedding_text(chunks[glyphs][0], title=document.title)])[0]
    hits = store.store_chunk_vector_hits(graph.store_name, vector=list(vector), k=5)
    assert glyphs in {cid for cid, _ in hits}
    question = "What does the Trace Recorder figure show for the benchmarks?"
    # kept out of answers: chat evidence quotes no flagged passage
    found = evidence_retrieve(actor=alice, question=question, engine="graph", scope=Scope.PRIVATE, graph_id=graph.id)
    quoted = {item["chunk_id"] for item in found.items if item["kind"] == "passage"}
    assert not quoted & flagged
