"""Reads across the features for the dashboard (the top layer may read every app)."""

from __future__ import annotations

from typing import TypedDict

from exograph.accounts.models import ApiKey, User
from exograph.chat.models import ChatMessage, ChatRole
from exograph.documents.models import Document
from research.models import ResearchSession


class ChecklistStep(TypedDict):
    key: str  # verify | upload | ask | connect
    label: str
    done: bool
    url_name: str  # where to do it (a URL name)


def first_run_checklist_for_user(*, user: User) -> list[ChecklistStep]:
    """The dashboard's first-hour checklist, each step ticked from what user has really done: the email verified, a
    document uploaded, a question asked (a chat message or a research session), an API key created (to connect an
    agent over MCP or REST; a revoked key still counts as done)."""
    asked = (
        ChatMessage.objects.filter(session__owner=user, role=ChatRole.USER).exists()
        or ResearchSession.objects.filter(owner=user).exists()
    )
    return [
        {"key": "verify", "label": "Verify your email address", "done": user.email_verified, "url_name": ""},
        {
            "key": "upload",
            "label": "Upload a document",
            "done": Document.objects.filter(owner=user).exists(),
            "url_name": "documents:list",
        },
        {"key": "ask", "label": "Ask your graphs a question", "done": asked, "url_name": "chat:page"},
        {
            "key": "connect",
            "label": "Connect an agent: create an API key",
            "done": ApiKey.objects.filter(user=user).exists(),
            "url_name": "accounts:api_keys",
        },
    ]
