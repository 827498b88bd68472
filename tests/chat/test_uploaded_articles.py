"""An article as users upload it (a title line, then paragraphs) through the real pipeline (REST upload, parse,
chunk, embed, offline extraction, graph write), then chat: the title line is a title, never a sentence of the
answer nor its short answer, the evidence keeps the article's paragraphs, and a provider's prompt still reads one
evidence item a line. Written for this project, invented names; questions in other words than the article."""

from __future__ import annotations

import base64

import pytest

from billing.services import credits_grant_admin
from tests.documents.conftest import fixture_bytes

pytestmark = pytest.mark.django_db

MESSAGES = "/api/v1/chat/messages/"
ARTICLE = (
    "Valley gazette, autumn number\n\n"
    "The Brennock Mill stands on the east bank of the river Sallow. "
    "Its waterwheel was rebuilt in 1904 by the millwright Ewan Tarbet.\n\n"
    "The mill now belongs to the Sallow Valley Trust, which opens it to visitors on Sundays."
)


@pytest.fixture
def article(alice, alice_client, django_capture_on_commit_callbacks):  # type: ignore[no-untyped-def]
    credits_grant_admin(account=alice, amount=200, actor=None, note="tests")
    with django_capture_on_commit_callbacks(execute=True):
        response = alice_client.post("/api/v1/documents/", {"text": ARTICLE, "title": "Gazette"}, format="json")
    assert response.status_code == 201, response.json()
    document_id = response.json()["id"]
    assert alice_client.get(f"/api/v1/documents/{document_id}/").json()["status"] == "processed"
    return document_id


@pytest.mark.parametrize("engine", ["graph", "rag"])
def test_the_title_line_is_neither_quoted_nor_the_short_answer(alice_client, article, engine):  # type: ignore[no-untyped-def]
    body = alice_client.post(
        MESSAGES, {"message": "Who owns the mill by the Sallow today?", "reasoning_engine": engine}, format="json"
    ).json()
    assert body["answered"] is True, body["answer"]
    assert "gazette" not in body["answer"].casefold()
    assert "gazette" not in (body["short_answer"] or "").casefold()
    passages = [item for item in body["considered"] if item["kind"] == "passage"]
    assert passages and all(item["document_id"] == article for item in passages)
    # the evidence keeps the article's paragraphs: the title stays apart from the first sentence
    assert "Valley gazette, autumn number\n\nThe Brennock Mill stands" in passages[0]["text"]


def test_a_providers_prompt_reads_one_evidence_item_a_line(alice_client, article, openai_chat):  # type: ignore[no-untyped-def]
    openai_chat.queue("The Sallow Valley Trust [1].", "The Sallow Valley Trust [1].")
    response = alice_client.post(
        MESSAGES, {"message": "Who owns the mill by the Sallow today?", "reasoning_engine": "rag"}, format="json"
    )
    assert response.status_code == 201, response.json()
    system = openai_chat.bodies[0]["messages"][0]["content"]
    lines = system.split("Evidence:", 1)[1].strip().splitlines()
    assert lines and all(line.startswith("[") for line in lines), lines
    assert any("Valley gazette, autumn number The Brennock Mill stands" in line for line in lines), lines


def test_a_pdfs_running_head_and_section_heading_are_not_quoted_as_the_answers_start(
    alice, alice_client, django_capture_on_commit_callbacks
):  # type: ignore[no-untyped-def]
    # pm_dmca.pdf: every page opens with "The Digital Millennium Copyright Act of 1998" and "Copyright Office Summary
    # December 1998 Page N"; page 1 then has "INTRODUCTION" above the sentence naming who signed the act.
    credits_grant_admin(account=alice, amount=200, actor=None, note="tests")
    upload = {
        "file_content_base64": base64.b64encode(fixture_bytes("pdf/pm_dmca.pdf")).decode(),
        "filename": "dmca.pdf",
    }
    with django_capture_on_commit_callbacks(execute=True):
        response = alice_client.post("/api/v1/documents/", upload, format="json")
    assert response.status_code == 201, response.json()
    assert alice_client.get(f"/api/v1/documents/{response.json()['id']}/").json()["status"] == "processed"
    body = alice_client.post(
        MESSAGES,
        {"message": "Which president put his signature on the DMCA?", "reasoning_engine": "graph"},
        format="json",
    ).json()
    assert body["answered"] is True, body["answer"]
    assert "Clinton" in body["answer"], body["answer"]
    for furniture in ("Page 1", "December 1998", "INTRODUCTION"):
        assert furniture not in body["answer"], body["answer"]
