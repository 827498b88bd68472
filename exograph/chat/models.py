"""Chat: sessions (one conversation's settings and evidence numbering) and their messages."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from exograph.core.models import TimeStampedModel
from exograph.core.scope import Scope


class ChatModel(models.TextChoices):
    SNAP = "snap", "Snap (fast)"
    PONDER = "ponder", "Ponder (deep)"


class ChatEngine(models.TextChoices):
    RAG = "rag", "Passages"
    GRAPH = "graph", "Graph"
    WEB = "web", "Web"


class ChatRole(models.TextChoices):
    USER = "user", "User"
    ASSISTANT = "assistant", "Assistant"


class ChatSession(TimeStampedModel):
    """One conversation. Evidence numbers [n] are unique within it (next_evidence_number)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="chat_sessions")
    title = models.CharField(max_length=200, blank=True, default="")
    model_name = models.CharField(max_length=16, choices=ChatModel.choices, default=ChatModel.SNAP)
    reasoning_engine = models.CharField(max_length=16, choices=ChatEngine.choices, default=ChatEngine.RAG)
    graph_scope = models.CharField(max_length=16, choices=Scope.choices, default=Scope.PRIVATE)
    graph_id = models.CharField(max_length=64, blank=True, default="")
    next_evidence_number = models.PositiveIntegerField(default=1)

    class Meta:
        indexes = [models.Index(fields=["owner", "graph_scope", "-modified"], name="chat_session_owner_recent")]

    def __str__(self) -> str:
        return f"chat session {self.id}"


class ChatMessage(TimeStampedModel):
    """A user question or an assistant answer with the evidence it was given, its citation check and usage."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    session = models.ForeignKey(ChatSession, on_delete=models.CASCADE, related_name="messages")
    role = models.CharField(max_length=16, choices=ChatRole.choices)
    content = models.TextField()
    model_name = models.CharField(max_length=16, blank=True, default="")
    reasoning_engine = models.CharField(max_length=16, blank=True, default="")
    evidence = models.JSONField(default=list, blank=True)  # the numbered items handed to the model
    citations = models.JSONField(default=dict, blank=True)  # the citation check (grounded, support score, ...)
    usage = models.JSONField(default=dict, blank=True)  # credits, provider, tokens

    class Meta:
        ordering = ["created", "id"]
        indexes = [models.Index(fields=["session", "created"], name="chat_message_session_created")]

    def __str__(self) -> str:
        return f"chat message {self.id}"
