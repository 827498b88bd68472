"""Plain-text and Markdown ingest: REST file, base64 and JSON-text uploads and the research service, one path."""

from __future__ import annotations

import base64
import uuid

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from billing.services import credit_balance
from exograph.core.scope import Scope
from exograph.documents.models import Document, DocumentChunk, DocumentStatus, SourceType
from exograph.documents.services import (
    document_stage_parse,
    document_text_ingest,
)
from exograph.graphs.models import GraphKind
from exograph.graphs.services import graph_default_for_user
from tests.factories import search_entities

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("drop_graph_stores")]


URL = "/api/v1/documents/"
ARTICLE = (
    "# Acme Robotics\n\n"
    "Acme Robotics is a company founded by Jane Doe in Boston.\n\n"
    "## Products\n\n"
    "Acme Robotics builds the Rover X1 for warehouses.\n"
)


def _post(client, capture, payload, *, fmt="json"):
    with capture(execute=True):
        return client.post(URL, payload, format=fmt)


def test_json_text_body_is_processed_priced_by_characters_and_its_title_is_an_entity(
    alice_client, funded, django_capture_on_commit_callbacks
):
    text = ARTICLE + "\n" + "More words about warehouses. " * 250  # about 7,300 characters: 3 units
    payload = {"text": text, "title": "Acme Robotics", "source_url": "https://example.org/acme"}
    response = _post(alice_client, django_capture_on_commit_callbacks, payload)
    assert response.status_code == 201, response.json()
    body = response.json()
    units = -(-len(text) // 3000)
    assert units == 3
    assert body["content_type"] == "markdown" and body["pages"] == units
    assert body["credits_charged"] == 5 + units and body["balance"] == 1000 - 5 - units
    assert body["title"] == "Acme Robotics" and body["source_url"] == "https://example.org/acme"
    assert body["filename"] == "Acme-Robotics.md"
    document = alice_client.get(f"{URL}{body['id']}/").json()
    assert document["status"] == "processed", document
    hits = search_entities(user=funded, query="Acme Robotics", scope=Scope.PRIVATE)
    assert any(hit["name"] == "Acme Robotics" for hit in hits)


def test_multipart_txt_and_base64_md_files_are_text_documents(alice_client, funded, django_capture_on_commit_callbacks):
    plain = _post(
        alice_client,
        django_capture_on_commit_callbacks,
        {"file": SimpleUploadedFile("notes.txt", b"Jane Doe met John Roe in Paris.\n"), "title": "Notes"},
        fmt="multipart",
    )
    assert plain.status_code == 201, plain.json()
    assert plain.json()["content_type"] == "text" and plain.json()["credits_charged"] == 6
    assert plain.json()["title"] == "Notes"
    encoded = base64.b64encode(ARTICLE.encode()).decode()
    md = _post(
        alice_client,
        django_capture_on_commit_callbacks,
        {"file_content_base64": encoded, "filename": "acme.md"},
    )
    assert md.status_code == 201, md.json()
    assert md.json()["content_type"] == "markdown"
    assert alice_client.get(f"{URL}{md.json()['id']}/").json()["status"] == "processed"
    assert credit_balance(account=funded) == 1000 - 12


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        ({"text": "", "title": "Empty"}, "empty_text"),
        ({"text": "   \n\t ", "title": "Blank"}, "empty_text"),
        ({"text": "Some text."}, "invalid_title"),
        # Empty text and no title: the text is what is wrong; adding a title alone would only meet a second error.
        ({"text": ""}, "empty_text"),
        ({"text": " \n "}, "empty_text"),
        ({"text": "Some text.", "title": "T", "source_url": "ftp://example.org/x"}, "invalid_source_url"),
        ({"file_content_base64": base64.b64encode(b"").decode(), "filename": "empty.txt"}, "invalid_upload"),
        (
            {"file_content_base64": base64.b64encode(b"\x00\x01\x02binary" * 50).decode(), "filename": "a.txt"},
            "binary_text_file",
        ),
        (
            {"file_content_base64": base64.b64encode(b"%PDF-1.4 fake").decode(), "filename": "a.md"},
            "extension_mismatch",
        ),
        (
            {
                "file_content_base64": base64.b64encode("caf\u00e9 cr\u00e8me".encode("latin-1")).decode(),
                "filename": "latin.txt",
            },
            "invalid_text_encoding",
        ),
        # 'scope' is not graph_scope: ignoring it would file a document meant for the world graph as private.
        ({"text": "Skerryvore light was lit in 1844.", "title": "Lights", "scope": "world"}, "unknown_field"),
    ],
    ids=[
        "empty",
        "whitespace",
        "no-title",
        "empty-no-title",
        "blank-no-title",
        "bad-url",
        "empty-file",
        "binary",
        "pdf-as-md",
        "latin1",
        "unknown-field",
    ],
)
def test_bad_text_uploads_are_clear_400s_and_cost_nothing(alice_client, funded, payload, code):
    response = alice_client.post(URL, payload, format="json")
    assert response.status_code == 400, response.json()
    error = response.json()["error"]
    assert error["code"] == code and error["message"] and error["hint"]
    assert credit_balance(account=funded) == 1000
    assert not Document.objects.exists()


@pytest.mark.parametrize(
    ("title", "text_format", "filename"),
    [
        ("Bakery notes.txt", "plain", "Bakery-notes.txt"),
        ("Oven maker.md", "markdown", "Oven-maker.md"),
        ("minutes.TXT", "markdown", "minutes.md"),
        ("draft.md", "plain", "draft.txt"),
        (".txt", "plain", "text.txt"),
    ],
)
def test_a_title_ending_in_a_text_extension_is_not_named_twice(
    alice_client, funded, django_capture_on_commit_callbacks, title, text_format, filename
):
    """A note titled like its file ('Bakery notes.txt', or research's copy of an uploaded note.txt) keeps one
    extension, the one its format takes, not 'Bakery-notes.txt.txt'."""
    payload = {"text": "Maren Olufsen repaired the mill wheel in Stavby.", "title": title, "text_format": text_format}
    response = _post(alice_client, django_capture_on_commit_callbacks, payload)
    assert response.status_code == 201, response.json()
    assert response.json()["filename"] == filename
    assert response.json()["title"] == title


def test_invalid_utf8_error_names_the_encoding(alice_client, funded):
    data = b"valid start \xff\xfe invalid"
    response = alice_client.post(
        URL, {"file_content_base64": base64.b64encode(data).decode(), "filename": "x.txt"}, format="json"
    )
    assert response.status_code == 400
    assert "UTF-8" in response.json()["error"]["message"]


def test_ten_megabyte_text_is_refused_by_the_character_limit_for_free(alice_client, funded):
    text = "word " * (2 * 1024 * 1024)  # 10 MB, over DOCUMENTS_TEXT_MAX_CHARS (2,000,000)
    response = alice_client.post(URL, {"text": text, "title": "Huge"}, format="json")
    assert response.status_code == 413, response.json()
    assert response.json()["error"]["code"] == "text_too_large"
    as_file = alice_client.post(
        URL, {"file": SimpleUploadedFile("huge.txt", text.encode()), "title": "Huge"}, format="multipart"
    )
    assert as_file.status_code == 413 and as_file.json()["error"]["code"] == "text_too_large"
    assert credit_balance(account=funded) == 1000
    assert not Document.objects.exists()


def test_text_at_the_limit_is_quoted_at_the_right_price(alice_client, funded, settings):
    text = "x" * settings.DOCUMENTS_TEXT_MAX_CHARS
    response = alice_client.post(URL, {"text": text, "title": "Limit", "dry_run": "true"}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["credits_needed"] == 5 + settings.DOCUMENTS_TEXT_MAX_CHARS // 3000 + 1
    assert not Document.objects.exists()


def test_duplicate_text_is_unchanged_and_free(alice_client, funded, django_capture_on_commit_callbacks):
    payload = {"text": ARTICLE, "title": "Acme Robotics"}
    first = _post(alice_client, django_capture_on_commit_callbacks, payload)
    assert first.status_code == 201
    again = _post(alice_client, django_capture_on_commit_callbacks, payload)
    assert again.status_code == 200 and again.json()["status"] == "unchanged"
    assert again.json()["id"] == first.json()["id"] and again.json()["credits_charged"] == 0
    assert credit_balance(account=funded) == 1000 - 6


def test_markdown_headings_become_the_chunks_section_headings(alice_client, funded):
    response = alice_client.post(URL, {"text": ARTICLE, "title": "Acme Robotics"}, format="json")
    document_id = response.json()["id"]
    assert document_stage_parse(document_id=document_id)
    chunks = list(DocumentChunk.objects.filter(document_id=document_id).order_by("ordinal"))
    assert [c.heading for c in chunks] == ["Acme Robotics", "Acme Robotics › Products"]
    assert chunks[1].text.startswith("Products\n\nAcme Robotics builds the Rover X1")  # a heading is its own paragraph
    assert "#" not in chunks[0].text


def test_plain_text_keeps_hashes_as_text(alice_client, funded):
    response = alice_client.post(
        URL, {"text": "# not a heading\n\nbody", "title": "P", "text_format": "plain"}, format="json"
    )
    document_id = response.json()["id"]
    assert document_stage_parse(document_id=document_id)
    chunk = DocumentChunk.objects.get(document_id=document_id)
    assert chunk.heading == "" and chunk.text.startswith("# not a heading")


def test_service_ingest_into_a_world_graph_merges_and_is_idempotent(
    alice, bob, funded, django_capture_on_commit_callbacks
):
    graph = graph_default_for_user(actor=alice, scope=Scope.WORLD, kind=GraphKind.DOCUMENT)
    key = f"research-{uuid.uuid4().hex}"
    with django_capture_on_commit_callbacks(execute=True):
        document, created = document_text_ingest(
            actor=alice,
            graph=graph,
            title="Rover X1",
            text="The Rover X1 is a warehouse robot built by Acme Robotics.",
            source_url="https://example.org/rover",
            source_type=SourceType.ARTICLE,
            idempotency_key=key,
        )
    assert created
    document.refresh_from_db()
    assert document.status == DocumentStatus.PROCESSED and document.source_type == "article"
    assert document.credits_charged == 6 and credit_balance(account=alice) == 1000 - 6
    hits = search_entities(user=bob, query="Rover X1", scope=Scope.WORLD)
    assert any(hit["name"] == "Rover X1" for hit in hits)
    again, created_again = document_text_ingest(
        actor=alice,
        graph=graph,
        title="Rover X1",
        text="The Rover X1 is a warehouse robot built by Acme Robotics.",
        idempotency_key=key,
    )
    assert not created_again and again.id == document.id
    assert credit_balance(account=alice) == 1000 - 6


def test_charlie_cannot_read_or_write_alices_text_documents(
    alice_client, charlie_client, charlie, funded, django_capture_on_commit_callbacks
):
    mine = _post(
        charlie_client,
        django_capture_on_commit_callbacks,
        {"text": "Charlie's Widget Works makes gears.", "title": "Charlie Widget Works"},
    )
    assert mine.status_code == 201
    theirs = _post(alice_client, django_capture_on_commit_callbacks, {"text": ARTICLE, "title": "Acme Robotics"})
    assert charlie_client.get(f"{URL}{theirs.json()['id']}/").status_code == 404
    foreign = charlie_client.post(
        URL, {"text": "Injected.", "title": "X", "graph_id": theirs.json()["graph_id"]}, format="json"
    )
    assert foreign.status_code == 404
    assert not any(
        h["name"] == "Acme Robotics" for h in search_entities(user=charlie, query="Acme Robotics", scope=Scope.PRIVATE)
    )
    assert any(
        h["name"] == "Charlie Widget Works"
        for h in search_entities(user=charlie, query="Charlie Widget Works", scope=Scope.PRIVATE)
    )
    assert [d["id"] for d in charlie_client.get(URL).json()["results"]] == [mine.json()["id"]]


def test_api_docs_say_how_text_is_priced(alice_client):
    schema = alice_client.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    upload = schema["paths"]["/api/v1/documents/"]["post"]
    assert "1 per 3,000 characters" in upload["description"]
    assert "DOCUMENTS_TEXT_MAX_CHARS" in upload["description"]
