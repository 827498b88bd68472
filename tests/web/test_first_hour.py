"""The first hour on the web: one verification banner, a dashboard checklist ticked from real data, the free signup
credits named on the landing page, research sources marked unavailable offline."""

from __future__ import annotations

import re

import pytest

from exograph.accounts.models import ApiKey, User
from exograph.accounts.services import api_key_create
from exograph.chat.models import ChatMessage, ChatRole, ChatSession
from exograph.core.scope import Scope
from exograph.documents.models import Document, DocumentStatus
from exograph.graphs.services import graph_create
from exograph.home.selectors import first_run_checklist_for_user
from tests.factories import UserFactory
from tests.graphs import conftest as graph_fixtures

pytestmark = pytest.mark.django_db
_drop_graph_stores = graph_fixtures._drop_graph_stores

SIGNUP = {
    "email": "new@example.com",
    "password": "a-long-new-password-77",
    "password_confirm": "a-long-new-password-77",
}


def _done(user: User) -> dict[str, bool]:
    return {step["key"]: step["done"] for step in first_run_checklist_for_user(user=user)}


def test_signup_shows_one_verification_banner(client, settings) -> None:  # type: ignore[no-untyped-def]
    response = client.post("/signup/", SIGNUP, follow=True)
    assert response.status_code == 200, response.content[:500]
    html = response.content.decode()
    assert html.count("new@example.com") >= 1
    # One place tells the user about the link: the banner, not also a "we sent a link" message.
    assert html.count('id="verify-banner"') == 1
    assert len(re.findall(r"sent a (?:new )?link", html, flags=re.IGNORECASE)) == 1
    assert 'class="messages"' not in html  # no second notice about the same link


def test_checklist_ticks_what_the_account_has_done(alice) -> None:  # type: ignore[no-untyped-def]
    fresh = UserFactory(email="fresh@example.com", email_verified_at=None)
    assert _done(fresh) == {"verify": False, "upload": False, "ask": False, "connect": False}
    assert _done(alice)["verify"] is True
    graph = graph_create(actor=alice, name="Mine", scope=Scope.PRIVATE)
    Document.objects.create(
        owner=alice, graph=graph, filename="a.txt", size=10, content_type="txt", pages=1, status=DocumentStatus.FAILED
    )
    session = ChatSession.objects.create(owner=alice)
    ChatMessage.objects.create(session=session, role=ChatRole.ASSISTANT, content="hello")
    assert _done(alice) == {"verify": True, "upload": True, "ask": False, "connect": False}  # no question yet
    ChatMessage.objects.create(session=session, role=ChatRole.USER, content="who?")
    api_key_create(actor=alice, name="agent")
    assert _done(alice) == {"verify": True, "upload": True, "ask": True, "connect": True}
    assert _done(fresh) == {"verify": False, "upload": False, "ask": False, "connect": False}  # alice's, not fresh's
    assert ApiKey.objects.filter(user=fresh).count() == 0


def test_dashboard_shows_the_checklist_until_everything_is_done(client, alice) -> None:  # type: ignore[no-untyped-def]
    client.force_login(alice)
    html = client.get("/").content.decode()
    assert 'id="first-run"' in html and "(3 of 4 left)" in html
    assert re.search(r'<li class="done" data-step="verify">', html)
    assert re.search(r'<li class="todo" data-step="upload">', html) and 'href="/documents/"' in html
    api_key_create(actor=alice, name="agent")
    assert re.search(r'<li class="done" data-step="connect">', client.get("/").content.decode())
    session = ChatSession.objects.create(owner=alice)
    ChatMessage.objects.create(session=session, role=ChatRole.USER, content="who?")
    graph = graph_create(actor=alice, name="Mine", scope=Scope.PRIVATE)
    Document.objects.create(
        owner=alice,
        graph=graph,
        filename="a.txt",
        size=10,
        content_type="txt",
        pages=1,
        status=DocumentStatus.PROCESSED,
    )
    assert 'id="first-run"' not in client.get("/").content.decode()


@pytest.mark.parametrize("credits", [100, 37])
def test_landing_names_the_free_signup_credits_from_settings(client, settings, credits) -> None:  # type: ignore[no-untyped-def]
    settings.BILLING_SIGNUP_CREDITS = credits
    html = client.get("/").content.decode()
    assert f"New accounts get {credits} free credits" in html and f"{credits} free credits when you sign up" in html


def test_landing_without_signup_credits_promises_none(client, settings) -> None:  # type: ignore[no-untyped-def]
    settings.BILLING_SIGNUP_CREDITS = 0
    html = client.get("/").content.decode()
    assert "free credits when you sign up" not in html and "no free credits" in html


def _sources(html: str) -> dict[str, str]:
    return {
        m.group(1): m.group(0) for m in re.finditer(r'<input type="checkbox" name="sources" value="(\w+)"[^>]*>', html)
    }


def test_research_form_does_not_tick_sources_unavailable_offline(client, alice, settings) -> None:  # type: ignore[no-untyped-def]
    settings.ARXIV_API_URL = ""
    settings.WIKIPEDIA_API_URL = ""
    settings.WEB_SEARCH_URL = ""
    client.force_login(alice)
    html = client.get("/research/").content.decode()
    boxes = _sources(html)
    assert set(boxes) == {"paper", "article", "local"}
    for kind in ("paper", "article"):
        assert "disabled" in boxes[kind] and "checked" not in boxes[kind]
    assert "checked" in boxes["local"] and "disabled" not in boxes["local"]
    assert (
        "Papers (unavailable)" in html and "Articles (unavailable)" in html and "World Graph (unavailable)" not in html
    )


def test_research_form_ticks_configured_sources(client, alice, settings) -> None:  # type: ignore[no-untyped-def]
    settings.ARXIV_API_URL = "https://export.arxiv.org/api/query"
    settings.WIKIPEDIA_API_URL = ""
    settings.WEB_SEARCH_URL = "https://search.example/api"  # articles through the web search, like the chat's engine
    client.force_login(alice)
    html = client.get("/research/").content.decode()
    boxes = _sources(html)
    assert all("checked" in box and "disabled" not in box for box in boxes.values())
    assert "(unavailable)" not in html
