"""Research sessions: a topic read from outside sources into a graph, step by persisted step.

A session's pipeline is a list of steps (plan, search:<n>, select, read:<key>, synthesise), each stored
with its result before the next starts, so a killed worker resumes where it stopped and a retried
step never captures its price twice (the capture key is derived from the step's key).
A watch topic is a session with `watch` set: each scheduled run is a child session (`watch_of`)
with its own budget, writing into the same graph and reading only sources the topic has not read.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from exograph.core.models import TimeStampedModel
from exograph.core.scope import Scope


class ResearchStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    COMPLETED = "completed", "Completed"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


ACTIVE_STATUSES = (ResearchStatus.PENDING, ResearchStatus.RUNNING)


class ResearchModel(models.TextChoices):
    SNAP = "snap", "Snap"
    PONDER = "ponder", "Ponder"


class WatchInterval(models.TextChoices):
    DAILY = "daily", "Daily"
    WEEKLY = "weekly", "Weekly"


class ResearchSession(TimeStampedModel):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="research_sessions")
    topic = models.TextField()
    model = models.CharField(max_length=8, choices=ResearchModel.choices, default=ResearchModel.SNAP)
    scope = models.CharField(max_length=16, choices=Scope.choices, default=Scope.PRIVATE)
    graph = models.ForeignKey(
        "graphs.Graph", null=True, blank=True, on_delete=models.SET_NULL, related_name="research_sessions"
    )
    graph_name = models.CharField(max_length=200, blank=True, default="")  # kept if the graph is deleted
    # True when the session created its graph: a failed session deletes that graph if it holds nothing
    graph_created = models.BooleanField(default=False)
    status = models.CharField(max_length=16, choices=ResearchStatus.choices, default=ResearchStatus.PENDING)
    # progress
    step = models.CharField(max_length=32, blank=True, default="queued")
    percent = models.PositiveSmallIntegerField(default=0)
    sources_found = models.PositiveIntegerField(default=0)
    sources_read = models.PositiveIntegerField(default=0)
    # money: the budget is held at creation; steps capture from it; the rest is released at the end
    budget_credits = models.PositiveIntegerField()
    hold = models.ForeignKey("billing.Hold", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    credits_spent = models.PositiveIntegerField(default=0)
    # options: {"sources": [...], "date_from": "YYYY-MM-DD"|None, "date_to": ..., "excluded_domains": [...]}
    options = models.JSONField(default=dict, blank=True)
    watch = models.CharField(max_length=8, choices=WatchInterval.choices, blank=True, default="")
    watch_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.CASCADE, related_name="watch_runs")
    next_run_at = models.DateTimeField(null=True, blank=True)
    report = models.JSONField(null=True, blank=True)
    note = models.CharField(max_length=500, blank=True, default="")
    error = models.CharField(max_length=1000, blank=True, default="")
    started_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created", "-id"]
        indexes = [
            models.Index(fields=["owner", "-created"]),
            models.Index(fields=["watch", "next_run_at"]),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(budget_credits__gte=1), name="research_budget_positive"),
            models.CheckConstraint(
                condition=Q(credits_spent__lte=models.F("budget_credits")), name="research_spent_within_budget"
            ),
        ]

    def __str__(self) -> str:
        return f"research {self.id} ({self.status})"

    @property
    def credits_held(self) -> int:
        return int(self.budget_credits)

    @property
    def watch_root_id(self) -> uuid.UUID:
        return self.watch_of_id or self.id


class ResearchStep(TimeStampedModel):
    """One finished pipeline step: its result (JSON) and what it captured, under a key unique per session."""

    session = models.ForeignKey(ResearchSession, on_delete=models.CASCADE, related_name="steps")
    key = models.CharField(max_length=120)
    ordinal = models.PositiveIntegerField()
    result = models.JSONField(default=dict, blank=True)
    credits = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["session", "ordinal"]
        constraints = [models.UniqueConstraint(fields=["session", "key"], name="research_step_unique_key")]

    def __str__(self) -> str:
        return f"{self.session_id}:{self.key}"


class ResearchSource(TimeStampedModel):
    """A source a session read and ingested: numbered as the report cites it."""

    session = models.ForeignKey(ResearchSession, on_delete=models.CASCADE, related_name="sources")
    number = models.PositiveIntegerField()
    key = models.CharField(max_length=600)  # the adapter's stable key (arXiv id, page id, URL, document id)
    adapter = models.CharField(max_length=16)
    kind = models.CharField(max_length=8)  # paper | article | local
    title = models.CharField(max_length=500)
    url = models.CharField(max_length=2000, blank=True, default="")
    published = models.DateField(null=True, blank=True)
    document = models.ForeignKey(
        "documents.Document", null=True, blank=True, on_delete=models.SET_NULL, related_name="research_sources"
    )

    class Meta:
        ordering = ["session", "number"]
        constraints = [
            models.UniqueConstraint(fields=["session", "key"], name="research_source_unique_key"),
            models.UniqueConstraint(fields=["session", "number"], name="research_source_unique_number"),
        ]

    def __str__(self) -> str:
        return f"[{self.number}] {self.title[:60]}"
