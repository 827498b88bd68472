"""REST upload → pipeline (eager Celery) → graph, plus billing, dedup, idempotency, cancel, retry, delete, isolation."""

from __future__ import annotations

import base64
import uuid

import pytest
from django.test import override_settings

from billing.services import credit_balance
from exograph.core.scope import Scope
from exograph.documents.models import Document, DocumentBlob, DocumentChunk, DocumentStatus
from exograph.documents.services import document_stage_embed, document_stage_index, document_stage_parse
from exograph.graphs import store
from exograph.graphs.models import Graph
from tests.documents.conftest import (
    billion_laughs_docx,
    docx_declaring_pages,
    docx_with_paragraphs,
    five_letter_paragraphs,
    fixture_bytes,
    many_pages_pdf,
    zip_bomb_docx,
)
from tests.factories import search_entities

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("drop_graph_stores")]

URL = "/api/v1/documents/"
PDF = "pdf/pm_naacl06-shinyama.pdf"  # 8 pages: 5 + 8 = 13 credits
SMALL_PDF = "pdf/sf_pdflatex-4-pages.pdf"  # 4 pages: 9 credits
DOCX = "docx/poi_IllustrativeCases.docx"  # 4 pages (docProps/app.xml): 9 credits


def _b64(name: str) -> dict[str, str]:
    return {"file_content_base64": base64.b64encode(fixture_bytes(name)).decode(), "filename": name.split("/")[-1]}


def _multipart(name: str, **extra: str) -> dict[str, object]:
    from django.core.files.uploadedfile import SimpleUploadedFile

    return {"file": SimpleUploadedFile(name.split("/")[-1], fixture_bytes(name)), **extra}


def _upload(client, capture, payload, *, fmt="json", headers=None):
    with capture(execute=True):
        return client.post(URL, payload, format=fmt, headers=headers or {})


def test_multipart_pdf_goes_through_the_pipeline_and_is_searchable(
    alice_client, funded, django_capture_on_commit_callbacks
):
    response = _upload(alice_client, django_capture_on_commit_callbacks, _multipart(PDF), fmt="multipart")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["filename"] == "pm_naacl06-shinyama.pdf"
    assert body["pages"] == 8 and body["pages_estimated"] is False
    assert body["scope"] == "private" and body["graph_id"].startswith("graph_")
    assert body["credits_charged"] == 13 and body["balance"] == 1000 - 13
    document = alice_client.get(f"{URL}{body['id']}/").json()
    assert document["status"] == "processed", document
    assert document["progress"] == 100 and document["stage"] == "done" and document["failure"] is None
    assert document["chunk_count"] > 10 and document["entity_count"] > 10
    hits = search_entities(user=funded, query="Information Extraction", scope=Scope.PRIVATE)
    assert any(hit["name"] == "Information Extraction" for hit in hits)
    assert all(hit["graph_id"] == body["graph_id"] for hit in hits)
    # stage data is dropped once processed
    assert not DocumentChunk.objects.filter(document_id=body["id"]).exists()
    assert not DocumentBlob.objects.filter(document_id=body["id"]).exists()


def test_base64_docx_with_headings_and_tables_is_searchable(alice_client, funded, django_capture_on_commit_callbacks):
    response = _upload(alice_client, django_capture_on_commit_callbacks, _b64(DOCX))
    assert response.status_code == 201, response.json()
    assert response.json()["pages"] == 4 and response.json()["credits_charged"] == 9
    assert alice_client.get(f"{URL}{response.json()['id']}/").json()["status"] == "processed"
    hits = search_entities(user=funded, query="Early Childcare Supplement", scope=Scope.PRIVATE)
    assert any("Early Childcare Supplement" in hit["name"] for hit in hits)


def test_an_uploaded_documents_chunks_fit_the_embedding_model_by_its_own_count(alice_client, funded, settings):
    """A parts list of codes, figures and links: the parse stage stores no chunk past the configured size by the
    model's tokenizer (the words-times-1.3 estimate let such chunks pass the model's 256-token input, cut unseen)."""
    from exograph.graphs.embeddings import get_embedder

    rows = [
        f"Part KX-{i:04d}/B{i * 31 % 997:03d} rev {i}.{i % 7}a: https://parts.example/kx/{i}?lot=Q{i * 13}"
        for i in range(90)
    ]
    payload = {
        "file_content_base64": base64.b64encode(docx_with_paragraphs(" ".join(rows))).decode(),
        "filename": "parts.docx",
    }
    response = alice_client.post(URL, payload, format="json")  # on_commit not run: the stages run below
    assert response.status_code == 201, response.json()
    assert document_stage_parse(document_id=response.json()["id"]) is True
    texts = list(DocumentChunk.objects.filter(document_id=response.json()["id"]).values_list("text", flat=True))
    counts = [get_embedder().count_tokens(text) for text in texts]  # type: ignore[attr-defined]
    assert len(texts) > 2 and max(counts) <= settings.DOCUMENTS_CHUNK_TOKENS


def test_world_scope_upload_merges_into_the_world_graph_and_delete_removes_it(
    alice_client, bob, funded, django_capture_on_commit_callbacks
):
    response = _upload(
        alice_client, django_capture_on_commit_callbacks, _multipart(PDF, graph_scope="world"), fmt="multipart"
    )
    assert response.status_code == 201, response.json()
    assert response.json()["scope"] == "world"
    hits = search_entities(user=bob, query="Information Extraction", scope=Scope.WORLD)
    assert any(hit["name"] == "Information Extraction" for hit in hits)
    assert alice_client.delete(f"{URL}{response.json()['id']}/").status_code == 204
    hits = search_entities(user=bob, query="Information Extraction", scope=Scope.WORLD)
    assert not any(hit["name"] == "Information Extraction" for hit in hits)
    assert alice_client.get(f"{URL}{response.json()['id']}/").status_code == 404
    assert credit_balance(account=funded) == 1000 - 13  # delete refunds nothing


def test_file_path_upload_under_the_root(alice_client, funded, tmp_path, settings, django_capture_on_commit_callbacks):
    settings.EXOGRAPH_UPLOAD_ROOT = str(tmp_path)
    (tmp_path / "inbox").mkdir()
    (tmp_path / "inbox" / "paper.pdf").write_bytes(fixture_bytes(SMALL_PDF))
    response = _upload(alice_client, django_capture_on_commit_callbacks, {"file_path": "inbox/paper.pdf"})
    assert response.status_code == 201, response.json()
    assert response.json()["filename"] == "paper.pdf"
    outside = alice_client.post(URL, {"file_path": "/etc/hostname"}, format="json")
    assert outside.status_code == 403 and outside.json()["error"]["code"] == "path_outside_root"


def test_file_path_is_refused_when_no_root_is_set(alice_client, funded, settings):
    settings.EXOGRAPH_UPLOAD_ROOT = ""
    response = alice_client.post(URL, {"file_path": "/etc/passwd"}, format="json")
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "file_path_disabled"
    assert credit_balance(account=funded) == 1000


def test_same_file_same_graph_is_unchanged_and_free(alice_client, funded, django_capture_on_commit_callbacks):
    first = _upload(alice_client, django_capture_on_commit_callbacks, _b64(SMALL_PDF))
    assert first.status_code == 201
    again = _upload(alice_client, django_capture_on_commit_callbacks, _b64(SMALL_PDF))
    assert again.status_code == 200
    assert again.json()["status"] == "unchanged"
    assert again.json()["id"] == first.json()["id"]
    assert again.json()["credits_charged"] == 0
    assert credit_balance(account=funded) == 1000 - 9
    # another graph (world scope) is another document
    other = _upload(alice_client, django_capture_on_commit_callbacks, {**_b64(SMALL_PDF), "graph_scope": "world"})
    assert other.status_code == 201 and other.json()["id"] != first.json()["id"]


def test_idempotency_key_retry_returns_the_first_result_and_charges_once(
    alice_client, funded, django_capture_on_commit_callbacks
):
    headers = {"Idempotency-Key": f"upload-{uuid.uuid4().hex}"}
    first = _upload(alice_client, django_capture_on_commit_callbacks, _b64(SMALL_PDF), headers=headers)
    second = _upload(alice_client, django_capture_on_commit_callbacks, _b64(SMALL_PDF), headers=headers)
    assert first.status_code == second.status_code == 201
    assert second.json() == first.json()
    assert second.headers.get("Idempotent-Replayed") == "true"
    assert credit_balance(account=funded) == 1000 - 9
    assert Document.objects.filter(owner=funded).count() == 1


def test_dry_run_quotes_without_writing(alice_client, funded):
    response = alice_client.post(f"{URL}?dry_run=true", _b64(PDF), format="json")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["dry_run"] is True and body["credits_needed"] == 13 and body["pages"] == 8
    assert body["balance"] == 1000 and body["covered"] is True
    assert not Document.objects.exists()


def _b64_bytes(data: bytes, filename: str) -> dict[str, str]:
    return {"file_content_base64": base64.b64encode(data).decode(), "filename": filename}


def test_docx_declaring_one_page_is_quoted_and_charged_by_its_text(alice_client, funded):
    # ~200,000 words declaring <Pages>1</Pages>: 400 pages from the text, 5 + 400 credits, not 6.
    payload = _b64_bytes(docx_declaring_pages(five_letter_paragraphs(200), pages=1), "long.docx")
    quote = alice_client.post(f"{URL}?dry_run=true", payload, format="json")
    assert quote.status_code == 200, quote.json()
    assert quote.json()["pages"] == 400 and quote.json()["credits_needed"] == 405
    assert quote.json()["pages_estimated"] is True
    response = alice_client.post(URL, payload, format="json")  # on_commit not run: charged, not processed
    assert response.status_code == 201, response.json()
    assert credit_balance(account=funded) == 1000 - 405
    document = Document.objects.get(id=response.json()["id"])
    assert document.pages == 400 and document.credits_charged == 405


def test_api_docs_say_how_docx_pages_are_counted(alice_client):
    schema = alice_client.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    upload = schema["paths"]["/api/v1/documents/"]["post"]
    assert "3,000 characters" in upload["description"] and "docProps/app.xml" in upload["description"]


def test_hundred_thousand_page_pdf_is_refused_with_the_page_limit_and_costs_nothing(alice_client, funded):
    response = alice_client.post(URL, _b64_bytes(many_pages_pdf(100_000), "huge.pdf"), format="json")
    assert response.status_code == 400, response.json()
    assert response.json()["error"]["code"] == "too_many_pages"
    assert credit_balance(account=funded) == 1000
    assert not Document.objects.exists()


def test_insufficient_credits_is_402_and_writes_nothing(alice_client, alice):
    response = alice_client.post(URL, _b64(PDF), format="json")
    assert response.status_code == 402, response.json()
    assert not Document.objects.exists()


AWKWARD = [
    ("pdf/sf_libreoffice-writer-password.pdf", 400, "encrypted_document"),
    ("pdf/pm_aes-256.pdf", 400, "encrypted_document"),
    ("pdf/pdfjs_bug1250079.pdf", 400, "corrupt_document"),
    ("pdf/oc_invalid.pdf", 400, "corrupt_document"),
    ("pdf/pdfjs_scan-bad.pdf", 400, "no_extractable_text"),  # its mangled scan renders blank
    ("docx/poi_truncated62886.docx", 400, "corrupt_document"),
    ("docx/poi_clusterfuzz-POIXWPFFuzzer-6442791109263360.docx", 400, "corrupt_document"),
    ("docx/poi_bug53475-password-is-pass.docx", 400, "encrypted_document"),
    ("docx/mm_empty.docx", 400, "no_extractable_text"),
]


@pytest.mark.parametrize(("name", "status", "code"), AWKWARD, ids=[a[0].split("/")[-1] for a in AWKWARD])
def test_awkward_fixture_files_get_a_clear_4xx_and_cost_nothing(alice_client, funded, name, status, code):
    response = alice_client.post(URL, _b64(name), format="json")
    assert response.status_code == status, response.json()
    error = response.json()["error"]
    assert error["code"] == code and error["message"] and error["hint"]
    assert credit_balance(account=funded) == 1000
    assert not Document.objects.exists()


def test_wrong_extension_fixture_is_refused(alice_client, funded):
    payload = {"file_content_base64": base64.b64encode(fixture_bytes(SMALL_PDF)).decode(), "filename": "paper.docx"}
    response = alice_client.post(URL, payload, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "extension_mismatch"


@pytest.mark.parametrize(
    ("payload", "status", "code"),
    [
        ({"file_content_base64": "!!!not base64!!!", "filename": "a.pdf"}, 400, "invalid_base64"),
        ({"file_content_base64": "", "filename": "a.pdf"}, 400, "invalid_upload"),
        (
            {"file_content_base64": base64.b64encode(b"%PDF-1.4").decode(), "filename": "../../a.pdf"},
            400,
            "invalid_filename",
        ),
        (
            {"file_content_base64": base64.b64encode(b"%PDF-1.4").decode(), "filename": "a\x07.pdf"},
            400,
            "invalid_filename",
        ),
        ({"file_content_base64": base64.b64encode(b"%PDF-1.4").decode()}, 400, "invalid_filename"),
        ({}, 400, "invalid_upload"),
        ({"file_content_base64": "QQ==", "filename": "a.pdf", "file_path": "x.pdf"}, 400, "invalid_upload"),
        ({"file_content_base64": "QQ==", "filename": "a.pdf", "graph_scope": "galaxy"}, 400, "invalid_scope"),
    ],
)
def test_bad_upload_requests_are_clear_400s(alice_client, funded, payload, status, code):
    response = alice_client.post(URL, payload, format="json")
    assert response.status_code == status, response.json()
    assert response.json()["error"]["code"] == code
    assert response.json()["error"]["hint"]
    assert credit_balance(account=funded) == 1000


def test_empty_multipart_file_is_refused(alice_client, funded):
    from django.core.files.uploadedfile import SimpleUploadedFile

    response = alice_client.post(URL, {"file": SimpleUploadedFile("e.pdf", b"")}, format="multipart")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "empty_file"


def test_an_empty_note_is_refused_with_a_hint_that_names_notes_too(alice_client, funded):
    from django.core.files.uploadedfile import SimpleUploadedFile

    response = alice_client.post(URL, {"file": SimpleUploadedFile("minutes.txt", b"")}, format="multipart")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "empty_file" and ".txt" in error["hint"]  # not only "a PDF or DOCX"
    assert credit_balance(account=funded) == 1000


@pytest.mark.parametrize(
    ("make", "code"), [(zip_bomb_docx, "docx_decompression_limit"), (billion_laughs_docx, "docx_xml_entities")]
)
def test_hostile_docx_is_refused_before_charging(alice_client, funded, make, code):
    payload = {"file_content_base64": base64.b64encode(make()).decode(), "filename": "hostile.docx"}
    response = alice_client.post(URL, payload, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == code
    assert credit_balance(account=funded) == 1000


def test_sixty_megabyte_body_is_413(alice_client, funded):
    from django.core.files.uploadedfile import SimpleUploadedFile

    big = b"%PDF-1.4\n" + b"0" * (60 * 1024 * 1024)
    response = alice_client.post(URL, {"file": SimpleUploadedFile("big.pdf", big)}, format="multipart")
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "file_too_large"
    assert credit_balance(account=funded) == 1000


def test_failure_mid_pipeline_refunds_and_leaves_nothing_then_retry_succeeds(
    alice_client, funded, openai_embeddings, django_capture_on_commit_callbacks
):
    openai_embeddings.fail_next(500, {"error": {"message": "boom", "type": "server_error"}}, times=50)
    response = _upload(alice_client, django_capture_on_commit_callbacks, _b64(SMALL_PDF))
    assert response.status_code == 201
    document_id = response.json()["id"]
    failed = alice_client.get(f"{URL}{document_id}/").json()
    assert failed["status"] == "failed"
    assert failed["failure"]["stage"] == "embed" and failed["failure"]["reason"]
    assert credit_balance(account=funded) == 1000  # refunded in full
    graph = Graph.objects.get(id=response.json()["graph_id"])
    assert store.store_counts(graph.store_name)["documents"] == 0
    again = alice_client.post(URL, _b64(SMALL_PDF), format="json")  # the same file: point at the retry
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "document_exists_failed"
    assert again.json()["error"]["document_id"] == document_id and "/retry/" in again.json()["error"]["hint"]
    openai_embeddings.reset()  # the provider is back
    with django_capture_on_commit_callbacks(execute=True):
        retried = alice_client.post(f"{URL}{document_id}/retry/")
    assert retried.status_code == 202, retried.json()
    assert alice_client.get(f"{URL}{document_id}/").json()["status"] == "processed"
    assert credit_balance(account=funded) == 1000 - 9  # paid exactly once overall
    assert store.store_counts(graph.store_name)["documents"] == 1


def test_cancel_before_processing_stops_the_pipeline_and_refunds(alice_client, funded):
    response = alice_client.post(URL, _b64(SMALL_PDF), format="json")  # on_commit not run: still pending
    document_id = response.json()["id"]
    cancelled = alice_client.post(f"{URL}{document_id}/cancel/")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    assert credit_balance(account=funded) == 1000
    assert document_stage_parse(document_id=document_id) is False
    assert not DocumentChunk.objects.filter(document_id=document_id).exists()
    again = alice_client.post(f"{URL}{document_id}/cancel/")
    assert again.status_code == 409


def test_cancel_between_stages_removes_what_was_written(alice_client, funded):
    response = alice_client.post(URL, _b64(SMALL_PDF), format="json")
    document_id = response.json()["id"]
    assert document_stage_parse(document_id=document_id) is True
    assert document_stage_embed(document_id=document_id) is True
    alice_client.post(f"{URL}{document_id}/cancel/")
    assert document_stage_index(document_id=document_id) is False
    graph = Graph.objects.get(id=response.json()["graph_id"])
    assert store.store_counts(graph.store_name)["documents"] == 0
    assert Document.objects.get(id=document_id).status == DocumentStatus.CANCELLED


def test_stages_are_idempotent(alice_client, funded):
    response = alice_client.post(URL, _b64(SMALL_PDF), format="json")
    document_id = response.json()["id"]
    assert document_stage_parse(document_id=document_id)
    ids = list(DocumentChunk.objects.filter(document_id=document_id).values_list("id", flat=True))
    assert document_stage_parse(document_id=document_id)  # a redelivered task
    assert list(DocumentChunk.objects.filter(document_id=document_id).values_list("id", flat=True)) == ids
    assert document_stage_embed(document_id=document_id)
    assert document_stage_embed(document_id=document_id)
    document_stage_index(document_id=document_id)
    assert Document.objects.get(id=document_id).status == DocumentStatus.PROCESSED
    assert document_stage_index(document_id=document_id) is False  # already done: nothing happens


def test_list_is_newest_first_paged_and_scope_filtered(alice_client, funded, django_capture_on_commit_callbacks):
    a = _upload(alice_client, django_capture_on_commit_callbacks, _b64(SMALL_PDF)).json()
    b = _upload(alice_client, django_capture_on_commit_callbacks, _b64(DOCX)).json()
    w = _upload(alice_client, django_capture_on_commit_callbacks, {**_b64(SMALL_PDF), "graph_scope": "world"}).json()
    listed = alice_client.get(URL).json()
    assert [d["id"] for d in listed["results"]] == [b["id"], a["id"]]  # private by default
    item = listed["results"][0]
    assert set(item) >= {"id", "filename", "pages", "created", "scope", "status", "graph_id"}
    world = alice_client.get(URL, {"graph_scope": "world"}).json()
    assert [d["id"] for d in world["results"]] == [w["id"]]
    header = alice_client.get(URL, headers={"X-Graph-Scope": "world"}).json()
    assert [d["id"] for d in header["results"]] == [w["id"]]
    paged = alice_client.get(URL, {"limit": 1, "offset": 1}).json()
    assert paged["count"] == 2 and [d["id"] for d in paged["results"]] == [a["id"]]


def test_charlie_gets_404_on_alices_documents_everywhere(alice_client, charlie_client, funded):
    response = alice_client.post(URL, _b64(SMALL_PDF), format="json")
    document_id = response.json()["id"]
    for method, path in [
        ("get", f"{URL}{document_id}/"),
        ("delete", f"{URL}{document_id}/"),
        ("post", f"{URL}{document_id}/cancel/"),
        ("post", f"{URL}{document_id}/retry/"),
    ]:
        answer = getattr(charlie_client, method)(path)
        assert answer.status_code == 404, (method, path, answer.content)
        assert answer.json()["error"]["code"] == "document_not_found"
    assert charlie_client.get(URL).json()["results"] == []
    assert charlie_client.get(URL, {"graph_scope": "world"}).json()["results"] == []
    graph_id = response.json()["graph_id"]
    foreign = charlie_client.post(URL, {**_b64(SMALL_PDF), "graph_id": graph_id}, format="json")
    assert foreign.status_code == 404
    assert Document.objects.get(id=document_id).status == DocumentStatus.PENDING


def test_anonymous_is_401(anon_client):
    assert anon_client.get(URL).status_code == 401
    assert anon_client.post(URL, {}, format="json").status_code == 401


def test_progress_events_reach_the_owners_group(alice_client, funded, django_capture_on_commit_callbacks):
    from asgiref.sync import async_to_sync
    from channels.layers import get_channel_layer

    from exograph.documents.events import user_group

    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(user_group(funded.pk), channel)
    _upload(alice_client, django_capture_on_commit_callbacks, _b64(SMALL_PDF))
    events = []
    while True:
        try:
            message = async_to_sync(_receive)(layer, channel)
        except TimeoutError:
            break
        events.append(message["document"])
        if message["document"]["status"] == "processed":
            break
    stages = [e["stage"] for e in events]
    assert "parse" in stages and "embed" in stages and events[-1]["status"] == "processed"
    progress = [e["progress"] for e in events]
    assert progress == sorted(progress) and progress[-1] == 100


async def _receive(layer, channel):
    import asyncio

    return await asyncio.wait_for(layer.receive(channel), timeout=5)


@override_settings(DOCUMENTS_EXTRACTOR="offline")
def test_web_upload_page(client, alice, funded, django_capture_on_commit_callbacks):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from tests.documents.conftest import web_upload

    client.force_login(alice)
    page = client.get("/documents/")
    assert page.status_code == 200 and b"js/documents.js" in page.content  # live progress over /ws/events/
    with django_capture_on_commit_callbacks(execute=True):
        response = web_upload(  # the quote, then Confirm
            client, {"file": SimpleUploadedFile("d.docx", fixture_bytes(DOCX)), "graph_scope": "private"}
        )
    assert response.status_code == 302
    assert Document.objects.get(owner=alice).status == DocumentStatus.PROCESSED
    listing = client.get("/documents/")
    assert b"poi_IllustrativeCases" not in listing.content and b"d.docx" in listing.content
    bad = web_upload(
        client,
        {"file": SimpleUploadedFile("x.pdf", fixture_bytes("pdf/pm_aes-256.pdf")), "graph_scope": "private"},
    )
    assert bad.status_code == 302
    assert b"encrypted PDF" in client.get("/documents/").content


def test_llm_extractor_in_the_pipeline(alice_client, funded, settings, django_capture_on_commit_callbacks):
    import json

    from tests.fakes.llm_chat import FakeOpenAIChatServer

    with FakeOpenAIChatServer() as llm:
        settings.DOCUMENTS_EXTRACTOR = "llm"
        settings.LLM_BASE_URL = llm.base_url
        settings.LLM_API_KEY = llm.api_key
        settings.LLM_MODEL = "fake-model"
        llm.default = (
            200,
            json.dumps(
                {
                    "entities": [
                        {"name": "Quillfeather Institute", "type": "ORGANIZATION", "description": "Writes blind text."},
                        {"name": "Blind Text", "type": "CONCEPT", "description": "Filler text."},
                    ],
                    "relations": [{"source": "Quillfeather Institute", "target": "Blind Text", "type": "WRITES"}],
                }
            ),
        )
        response = _upload(alice_client, django_capture_on_commit_callbacks, _b64(SMALL_PDF))
        assert response.status_code == 201
        assert alice_client.get(f"{URL}{response.json()['id']}/").json()["status"] == "processed"
        assert llm.requests  # one request per chunk
    hits = search_entities(user=funded, query="Quillfeather Institute", scope=Scope.PRIVATE)
    assert hits and hits[0]["name"] == "Quillfeather Institute" and hits[0]["type"].upper() == "ORGANIZATION"


def test_a_documents_own_page_says_what_it_was_charged_and_whether_that_came_back(alice_client, funded):
    """GET /api/v1/documents/<id>/ (and cancel's answer) carry credits_charged and refunded, as the web viewer shows
    them ('23 credits (refunded)'): an agent that polls a document, or lost the upload's answer, can see its cost."""
    note = {"text": "Ilse Varga restored the clock tower in Kesmark in 1998.", "title": "Clock tower"}
    kept = alice_client.post(URL, note, format="json")
    assert kept.status_code == 201, kept.json()
    detail = alice_client.get(f"{URL}{kept.json()['id']}/").json()
    assert detail["credits_charged"] == kept.json()["credits_charged"] == 6 and detail["refunded"] is False
    dropped = alice_client.post(URL, _b64(SMALL_PDF), format="json")  # on_commit not run: still pending
    charged = dropped.json()["credits_charged"]
    cancelled = alice_client.post(f"{URL}{dropped.json()['id']}/cancel/").json()
    assert cancelled["credits_charged"] == charged > 0 and cancelled["refunded"] is True
    detail = alice_client.get(f"{URL}{dropped.json()['id']}/").json()
    assert detail["credits_charged"] == charged and detail["refunded"] is True
    assert credit_balance(account=funded) == 1000 - 6


@pytest.mark.parametrize("sent", ["body", "dry_run"])
def test_an_upload_asking_for_the_other_scope_than_its_graph_has_is_refused_for_free(alice, alice_client, funded, sent):
    """graph_id names a private graph and graph_scope says world (a user who means to publish and earn): the upload
    used to land in the private graph without a word. Refused as research refuses it (graph_scope_mismatch), naming
    both fixes; the header alone (a client's default scope) does not count against a named graph."""
    from exograph.graphs.services import graph_create

    notebook = graph_create(actor=alice, name="Ferry notes", scope=Scope.PRIVATE)
    note = {"text": "The MV Brandholm was built in Turku in 2008.", "title": "Brandholm", "graph_id": notebook.id}
    body = {**note, "graph_scope": "world", **({"dry_run": True} if sent == "dry_run" else {})}
    response = alice_client.post(URL, body, format="json")
    assert response.status_code == 400, response.json()
    error = response.json()["error"]
    assert error["code"] == "graph_scope_mismatch"
    assert notebook.id in error["message"] and "private" in error["message"] and "world" in error["message"]
    assert "graph_scope private" in error["hint"]
    assert credit_balance(account=funded) == 1000 and not Document.objects.exists()
    by_header = alice_client.post(URL, note, format="json", HTTP_X_GRAPH_SCOPE="world")
    assert by_header.status_code == 201, by_header.json()
    assert by_header.json()["scope"] == "private" and by_header.json()["graph_id"] == notebook.id
