"""Celery queues. Long research agents never block document ingest or billing."""

from __future__ import annotations

from enum import Enum


class Queue(str, Enum):
    DEFAULT = "default"
    INGEST = "ingest"
    RESEARCH = "research"
    BILLING = "billing"
