"""The document viewer (/documents/<id>/): the text by page, the cited passage highlighted, owner only; and the
view_url every passage evidence item carries to it (chat evidence, the explorer, the world graph)."""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest

from exograph.chat.evidence import evidence_retrieve
from exograph.core.scope import Scope
from exograph.documents.models import Document, DocumentStatus
from exograph.documents.selectors import evidence_view_urls
from exograph.documents.views import pages_label
from exograph.graphs.services import graph_create
from tests.graphs import conftest as graph_fixtures
from tests.graphs.conftest import QUANTUM_ENTITIES, QUANTUM_RELATIONS, QUANTUM_TEXTS

pytestmark = pytest.mark.django_db
# The graph tests' fixtures: write_doc, and every test's stores dropped after it.
write_doc = graph_fixtures.write_doc
_drop_graph_stores = graph_fixtures._drop_graph_stores

TEXTS = [*QUANTUM_TEXTS, "Superconducting qubits are cooled close to absolute zero."]


def _document(owner, graph, *, pages: int, filename: str = "q.pdf", **fields) -> Document:  # type: ignore[no-untyped-def]
    return Document.objects.create(
        owner=owner,
        graph=graph,
        filename=filename,
        size=1000,
        content_type="pdf",
        pages=pages,
        status=DocumentStatus.PROCESSED,
        credits_charged=5 + pages,
        **fields,
    )


@pytest.fixture
def quantum(alice, write_doc):  # type: ignore[no-untyped-def]
    """alice's processed 3-page document, its chunks (page i+1 holds TEXTS[i]) and entities in her graph."""
    graph = graph_create(actor=alice, name="Quantum", scope=Scope.PRIVATE)
    document = _document(alice, graph, pages=3, warnings=["Page 3 was read by OCR."], entity_count=4)
    write_doc(
        graph,
        alice,
        texts=TEXTS,
        entities=QUANTUM_ENTITIES,
        relations=QUANTUM_RELATIONS,
        filename="q.pdf",
        document_id=str(document.id),
    )
    return document


def test_viewer_shows_the_document_its_facts_pages_and_entities(client, alice, quantum) -> None:  # type: ignore[no-untyped-def]
    client.force_login(alice)
    response = client.get(f"/documents/{quantum.id}/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "q.pdf" in html and "processed" in html and "3 pages" in html and "8 credits" in html
    assert "Page 3 was read by OCR." in html
    assert "Page 1 <span" in html and TEXTS[0].replace("'", "&#x27;") in html and TEXTS[1] not in html
    for number in (1, 2, 3):  # every page is a real link (keyboard navigable)
        assert f'href="?page={number}"' in html
    assert "<mark>" not in html
    for name, _, _ in QUANTUM_ENTITIES:
        assert name.replace("'", "&#x27;") in html
    assert f"/graphs/{quantum.graph.id}/explore/?entity=" in html
    assert '<script src="/static/js/document_view.js" defer></script>' in html


def test_viewer_opens_at_the_cited_page_with_the_passage_marked(client, alice, quantum) -> None:  # type: ignore[no-untyped-def]
    client.force_login(alice)
    chunk = f"{quantum.id}:1"
    html = client.get(f"/documents/{quantum.id}/", {"page": 2, "chunk": chunk}).content.decode()
    assert "Page 2 <span" in html
    marked = re.findall(r'<p class="chunk cited" id="chunk-([^"]+)" tabindex="-1"><mark>(.*?)</mark></p>', html)
    assert marked == [(chunk, TEXTS[1])]
    # The chunk alone finds its page; a page out of range falls back to the chunk's.
    for params in ({"chunk": chunk}, {"page": 99, "chunk": chunk}):
        html = client.get(f"/documents/{quantum.id}/", params).content.decode()
        assert "Page 2 <span" in html and "<mark>" + TEXTS[1] + "</mark>" in html
    # Page links keep the highlight.
    assert f'href="?page=1&amp;chunk={chunk.replace(":", "%3A")}"' in html


def test_viewer_is_owner_only(client, alice, charlie, quantum) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=charlie, name="Notes", scope=Scope.PRIVATE)
    own = _document(charlie, graph, pages=1, filename="notes.txt")
    client.force_login(charlie)
    assert client.get(f"/documents/{quantum.id}/").status_code == 404
    assert client.get(f"/documents/{quantum.id}/", {"chunk": f"{quantum.id}:1"}).status_code == 404
    mine = client.get(f"/documents/{own.id}/")
    assert mine.status_code == 200
    html = mine.content.decode()
    assert "1 page<" in html and "1 pages" not in html and "6 credits" in html
    assert "The text shows here once" in html or "left no text" in html
    assert client.get("/documents/not-a-uuid/").status_code == 404
    quantum.deleted_at = quantum.created
    quantum.save(update_fields=["deleted_at"])
    client.force_login(alice)
    assert client.get(f"/documents/{quantum.id}/").status_code == 404


def test_viewer_needs_a_login(client, quantum) -> None:  # type: ignore[no-untyped-def]
    response = client.get(f"/documents/{quantum.id}/")
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_pages_label_is_singular_for_one_page() -> None:
    assert pages_label(1) == "1 page" and pages_label(0) == "0 pages" and pages_label(8) == "8 pages"


def test_documents_list_links_each_file_name_to_its_viewer(client, alice, quantum) -> None:  # type: ignore[no-untyped-def]
    client.force_login(alice)
    html = client.get("/documents/").content.decode()
    assert f'<a href="/documents/{quantum.id}/">q.pdf</a>' in html


def test_chat_evidence_carries_the_view_url_of_the_users_own_passages(alice, quantum) -> None:  # type: ignore[no-untyped-def]
    found = evidence_retrieve(
        actor=alice, question="What protects qubits from noise?", engine="rag", scope=Scope.PRIVATE, graph_id=None
    )
    passages = [item for item in found.items if item["kind"] == "passage"]
    assert passages
    for item in passages:
        query = urlencode({"page": item["page"], "chunk": item["chunk_id"]})
        assert item["view_url"] == f"/documents/{quantum.id}/?{query}"
        assert item["chunk_id"].startswith(str(quantum.id))


def test_view_url_is_none_for_a_document_the_asker_may_not_open(alice, charlie, quantum) -> None:  # type: ignore[no-untyped-def]
    item = {"kind": "passage", "document_id": str(quantum.id), "page": 2, "chunk_id": f"{quantum.id}:1"}
    web = {"kind": "passage", "document_id": None, "page": None, "chunk_id": None, "url": "https://example.org"}
    assert [i["view_url"] for i in evidence_view_urls(user=charlie, items=[item, web])] == [None, None]
    mine = evidence_view_urls(user=alice, items=[item, web])
    assert (
        mine[0]["view_url"] == f"/documents/{quantum.id}/?page=2&chunk={quantum.id}%3A1" and mine[1]["view_url"] is None
    )
    quantum.deleted_at = quantum.created
    quantum.save(update_fields=["deleted_at"])
    assert evidence_view_urls(user=alice, items=[item])[0]["view_url"] is None


def test_explorer_passages_and_sources_link_to_the_viewer(alice_client, quantum) -> None:  # type: ignore[no-untyped-def]
    body = alice_client.get(f"/api/v1/graphs/{quantum.graph.id}/explore/", {"entity": "qubit"}).json()
    assert body["passages"]
    for passage in body["passages"]:
        assert passage["view_url"] == (
            f"/documents/{quantum.id}/?page={passage['page']}&chunk={passage['chunk_id'].replace(':', '%3A')}"
        )
    source = {"document_id": str(quantum.id), "filename": "q.pdf", "view_url": f"/documents/{quantum.id}/"}
    assert body["sources"] == [source]
    assert body["edges"] and all(edge["sources"] == [source] for edge in body["edges"])


def test_search_page_from_a_graph_opens_empty_in_the_graphs_own_scope(client, alice, charlie, quantum) -> None:  # type: ignore[no-untyped-def]
    """Issue 27: the graph list's Search link (?graph_id=…) answered 400 "This field is required." untyped."""
    graph = quantum.graph
    client.force_login(alice)
    response = client.get("/graphs/search/", {"graph_id": graph.id})
    assert response.status_code == 200
    html = response.content.decode()
    assert "This field is required" not in html and "Found" not in html
    assert '<option value="private" selected>' in html and f'value="{graph.id}"' in html
    assert "Search entities in Quantum" in html
    found = client.get("/graphs/search/", {"graph_id": graph.id, "query": "qubit", "graph_scope": "private"})
    body = found.content.decode()
    assert found.status_code == 200 and "Qubit" in body
    assert f'href="/graphs/{graph.id}/explore/?entity=' in body  # each hit opens in the explorer
    assert client.get("/graphs/search/", {"graph_id": graph.id, "query": ""}).status_code == 400  # a blank search
    client.force_login(charlie)
    assert client.get("/graphs/search/", {"graph_id": graph.id}).status_code == 404


def test_web_upload_message_says_1_page_not_1_pages(client, alice, django_capture_on_commit_callbacks) -> None:  # type: ignore[no-untyped-def]
    from django.core.files.uploadedfile import SimpleUploadedFile

    from billing.services import credits_grant_admin
    from tests.documents.conftest import web_upload

    credits_grant_admin(account=alice, amount=100, actor=None, note="tests")
    client.force_login(alice)
    with django_capture_on_commit_callbacks(execute=True):
        response = web_upload(  # the quote, then Confirm
            client,
            {"file": SimpleUploadedFile("notes.txt", b"Jane Doe met John Roe in Paris.\n"), "graph_scope": "private"},
            follow=True,
        )
    html = response.content.decode()
    assert "notes.txt: 1 page, 6 credits." in html and "1 pages" not in html
    document = Document.objects.get(owner=alice, filename="notes.txt")
    assert f'<a href="/documents/{document.id}/">notes.txt</a>' in html
    viewer = client.get(f"/documents/{document.id}/").content.decode()
    assert "Jane Doe met John Roe in Paris." in viewer and "1 page<" in viewer
