from __future__ import annotations

from django.db import models


class TimeStampedModel(models.Model):
    created = models.DateTimeField(auto_now_add=True, db_index=True)
    modified = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class Lease(models.Model):
    """A claim on one piece of long-running work (a document's stage, a research step, a chat generation),
    renewed by its runner's heartbeat. Expired = its runner is gone: exograph/core/leases.py resumes or fails it."""

    kind = models.CharField(max_length=64)
    subject_id = models.CharField(max_length=64)
    # What part of the work runs (a document's stage task, a research step); the kind's resume reads it.
    step = models.CharField(max_length=200, blank=True, default="")
    # "host:pid" of the runner; blank while the work waits on the queue after a recovery.
    holder = models.CharField(max_length=200, blank=True, default="")
    token = models.UUIDField()
    expires_at = models.DateTimeField(db_index=True)
    heartbeat_at = models.DateTimeField()
    # How many times the work was found interrupted and resumed; the kind gives up past its maximum.
    recoveries = models.PositiveSmallIntegerField(default=0)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["kind", "subject_id"], name="core_lease_kind_subject_unique")]

    def __str__(self) -> str:
        return f"{self.kind}:{self.subject_id} ({self.step or 'queued'})"
