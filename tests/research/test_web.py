"""The research web pages (start with a budget, progress, cancel, report with citations) and live events."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from asgiref.testing import ApplicationCommunicator
from django.test import Client

from billing.services import credit_balance
from exograph.asgi import application
from research.models import ResearchSession, ResearchStatus
from research.services import research_session_complete, research_session_create

REPORT = {
    "summary": "Found 1 academic paper and 0 technical articles on surface codes.",
    "findings": [{"text": "Surface codes protect logical qubits.", "citations": [1]}],
    "open_questions": ["Which decoder is fastest?"],
    "sources": [
        {
            "number": 1,
            "title": "Surface codes",
            "url": "https://papers.example.org/surface-codes",
            "kind": "paper",
            "published": "2024-05-01",
            "document_id": None,
        }
    ],
}


def _client(user) -> Client:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_start_page_creates_a_session_with_its_budget_and_shows_errors(alice, fund):
    fund(alice, 100)
    client = _client(alice)
    page = client.get("/research/")
    assert page.status_code == 200 and b"Start research" in page.content and b'href="/research/"' in page.content
    response = client.post(
        "/research/", {"query": "surface codes", "budget_credits": 40, "model": "snap", "graph_scope": "private",
                       "sources": ["local"]},
    )  # fmt: skip
    session = ResearchSession.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/research/{session.id}/"
    assert session.budget_credits == 40 and credit_balance(account=alice) == 60
    bad = client.post("/research/", {"query": "surface codes", "budget_credits": 5, "model": "snap",
                                     "graph_scope": "private", "sources": ["local"]}, follow=True)  # fmt: skip
    assert b"at least the snap price" in bad.content and ResearchSession.objects.count() == 1


@pytest.mark.django_db
def test_report_page_has_clickable_citations_and_cancel_and_charlie_gets_404(alice, charlie, fund):
    fund(alice, 100)
    running = research_session_create(actor=alice, query="decoders")
    done = research_session_create(actor=alice, query="surface codes")
    research_session_complete(session=done, report=REPORT)
    client = _client(alice)
    page = client.get(f"/research/{done.id}/").content.decode()
    assert '<a href="#source-1" class="cite">[1]</a>' in page and 'id="source-1"' in page
    assert 'href="https://papers.example.org/surface-codes"' in page and "export/?format=docx" in page
    assert "<script>" not in page  # CSP: the live progress is a static file
    assert "js/research.js" in page
    assert _client(charlie).get(f"/research/{done.id}/").status_code == 404
    assert _client(charlie).post(f"/research/{running.id}/cancel/").status_code == 404
    live = client.get(f"/research/{running.id}/").content.decode()
    assert f'action="/research/{running.id}/cancel/"' in live
    client.post(f"/research/{running.id}/cancel/")
    running.refresh_from_db()
    assert running.status == ResearchStatus.CANCELLED
    assert credit_balance(account=alice) == 100  # nothing was captured: both holds came back whole


@pytest.mark.django_db(transaction=True)
def test_progress_events_reach_the_owner_only_without_the_topic(alice, charlie, fund, settings):
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    from channels.layers import channel_layers

    channel_layers.backends.clear()
    fund(alice, 100)
    fund(charlie, 100)
    from research.events import research_event_send

    mine = research_session_create(actor=alice, query="secret topic words")  # runs (eagerly): nothing to read
    theirs = research_session_create(actor=charlie, query="charlie topic words")
    mine.refresh_from_db()
    client = Client()
    client.force_login(alice)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME].value

    async def session() -> list[dict]:
        headers = [(b"origin", b"http://127.0.0.1"), (b"host", b"127.0.0.1"),
                   (b"cookie", f"{settings.SESSION_COOKIE_NAME}={cookie}".encode())]  # fmt: skip
        scope = {
            "type": "websocket",
            "path": "/ws/events/",
            "headers": headers,
            "subprotocols": [],
            "query_string": b"",
        }
        communicator = ApplicationCommunicator(application, scope)
        await communicator.send_input({"type": "websocket.connect"})
        assert (await communicator.receive_output(timeout=10))["type"] == "websocket.accept"
        await sync_to_async(research_event_send)(theirs)
        await sync_to_async(research_event_send)(mine)
        received = []
        while not await communicator.receive_nothing(timeout=1.5):
            received.append(json.loads((await communicator.receive_output(timeout=5))["text"]))
        await communicator.send_input({"type": "websocket.disconnect", "code": 1000})
        await communicator.wait(timeout=10)
        return received

    received = async_to_sync(session)()
    assert [m["type"] for m in received] == ["research.progress"]
    event = received[0]["research"]
    assert event["id"] == str(mine.id) and event["status"] == "completed" and event["progress"]["step"] == "done"
    assert "secret" not in json.dumps(received)
    channel_layers.backends.clear()


@pytest.mark.django_db
def test_dashboard_lists_own_research_sessions_only(alice, charlie, fund):
    fund(alice, 100)
    fund(charlie, 100)
    research_session_create(actor=alice, query="surface codes for alice", budget_credits=30)
    research_session_create(actor=charlie, query="charlie's own topic", budget_credits=30)
    page = _client(alice).get("/")
    assert page.status_code == 200
    assert b'id="dashboard-research"' in page.content and b"surface codes for alice" in page.content
    assert b"charlie&#x27;s own topic" not in page.content and b"charlie's own topic" not in page.content
    assert b"0/30 credits" in page.content
