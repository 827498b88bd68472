"""The web chat page: sidebar, pickers, rendered answers with citation links; rename/delete; dashboard."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from exograph.chat.citations import citations_check
from exograph.chat.models import ChatSession
from exograph.chat.views import answer_segments

pytestmark = pytest.mark.django_db


@pytest.fixture
def browser_for():  # type: ignore[no-untyped-def]
    def make(user):  # type: ignore[no-untyped-def]
        client = Client()
        client.force_login(user)
        return client

    return make


@pytest.fixture
def answered(alice, alice_client, alice_graph, fund):  # type: ignore[no-untyped-def]
    """One of alice's sessions with a cited answer from her private graph."""
    fund(alice, 10)
    body = alice_client.post(
        "/api/v1/chat/messages/", {"message": "What protects qubits from noise?"}, format="json"
    ).json()
    assert body["evidence"], body
    return body


@pytest.mark.parametrize("marker", ["[1-60]", "[3-101]", "[2-103]", "[9-4]", "[1, 55-70]"])
def test_the_page_links_the_numbers_the_answer_check_counts_as_cited(marker):
    """One parser (chat/citations.py): the page capped a range at 50 numbers, the check at 101 (issue 24)."""
    evidence = {n: f"Passage {n} about surface codes." for n in range(1, 121)}
    check = citations_check(answer=f"Surface codes protect qubits {marker}.", evidence=evidence)
    segments = answer_segments(f"Surface codes protect qubits {marker}.", known=set(evidence))
    linked = [n for segment in segments for n in segment.get("cite", [])]
    assert linked == check.cited


def test_a_range_of_60_is_linked_whole():
    segments = answer_segments("Qubits [1-60].", known=set(range(1, 61)))
    assert segments[1] == {"cite": list(range(1, 61))}


def test_answer_segments_link_known_numbers_only():
    segments = answer_segments("Qubits are fragile [1, 3]. See [9]. Also [2-3].", known={1, 2, 3})
    assert segments == [
        {"text": "Qubits are fragile "},
        {"cite": [1, 3]},
        {"text": ". See "},
        {"text": "[9]"},
        {"text": ". Also "},
        {"cite": [2, 3]},
        {"text": "."},
    ]


def test_chat_page_needs_login():
    response = Client().get("/chat/")
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_new_chat_page_has_labelled_pickers_and_web_disabled_with_the_reason(alice, browser_for, settings):  # type: ignore[no-untyped-def]
    settings.WEB_SEARCH_URL = ""
    page = browser_for(alice).get("/chat/").content.decode()
    for control in ("chat-message", "chat-model", "chat-engine", "chat-scope", "chat-graph"):
        assert f'<label for="{control}">' in page
    assert '<option value="web" disabled>' in page and "WEB_SEARCH_URL" in page
    assert "Snap (fast), 3 credits" in page and "Ponder (deep), 3 credits" in page  # offline: ponder as snap
    assert 'src="/static/js/chat.js"' in page and "<script>" not in page  # CSP: no inline script
    assert 'href="/chat/" aria-current="page"' in page  # the nav link


def test_web_engine_is_offered_when_configured(alice, browser_for, settings):  # type: ignore[no-untyped-def]
    settings.WEB_SEARCH_URL = "http://127.0.0.1:9/search"
    page = browser_for(alice).get("/chat/").content.decode()
    assert '<option value="web">Web</option>' in page


def test_session_page_renders_the_answer_with_citations_that_open_the_passage(alice, browser_for, answered):  # type: ignore[no-untyped-def]
    page = browser_for(alice).get(f"/chat/{answered['session_id']}/").content.decode()
    first = answered["evidence"][0]
    message = answered["message_id"]
    assert f'href="#ev-{message}-{first["n"]}"' in page
    assert f'id="ev-{message}-{first["n"]}"' in page
    assert f'href="/documents/{first["document_id"]}/?page={first["page"]}&amp;chunk=' in page and "quantum.pdf" in page
    assert "Grounded" in page and f"Support {round(answered['support_score'] * 100)}%" in page
    assert re.search(r'<li class="current" data-id="' + answered["session_id"], page)


def test_charlie_gets_404_for_alices_session_page_rename_and_delete(alice, charlie, browser_for, answered):  # type: ignore[no-untyped-def]
    sid = answered["session_id"]
    charlie_browser = browser_for(charlie)
    assert charlie_browser.get(f"/chat/{sid}/").status_code == 404
    assert charlie_browser.post(f"/chat/{sid}/rename/", {"title": "mine"}).status_code == 404
    assert charlie_browser.post(f"/chat/{sid}/delete/").status_code == 404
    assert "What protects qubits" not in charlie_browser.get("/chat/").content.decode()
    assert ChatSession.objects.get(id=sid).title == "What protects qubits from noise?"


def test_rename_and_delete_from_the_page(alice, browser_for, answered):  # type: ignore[no-untyped-def]
    sid = answered["session_id"]
    browser = browser_for(alice)
    renamed = browser.post(f"/chat/{sid}/rename/", {"title": "  Qubit   noise "}, follow=True)
    assert ChatSession.objects.get(id=sid).title == "Qubit noise" and "Renamed to" in renamed.content.decode()
    empty = browser.post(f"/chat/{sid}/rename/", {"title": ""}, follow=True)
    assert "at most 200 characters" in empty.content.decode()
    deleted = browser.post(f"/chat/{sid}/delete/", follow=True)
    assert deleted.redirect_chain[-1][0] == "/chat/" and not ChatSession.objects.filter(id=sid).exists()


def test_dashboard_lists_recent_chat_sessions(alice, browser_for, answered):  # type: ignore[no-untyped-def]
    page = browser_for(alice).get("/").content.decode()
    assert f'href="/chat/{answered["session_id"]}/"' in page and "What protects qubits from noise?" in page
