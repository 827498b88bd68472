"""Research reads on both backends (SQLite refuses what PostgreSQL allows, e.g. a union of ordered querysets)."""

from __future__ import annotations

import pytest

from research.models import ResearchSession, ResearchSource
from research.selectors import research_keys_read

pytestmark = pytest.mark.django_db


def _session(owner, *, watch_of=None) -> ResearchSession:  # type: ignore[no-untyped-def]
    return ResearchSession.objects.create(owner=owner, topic="tidal energy", budget_credits=30, watch_of=watch_of)


def _source(session: ResearchSession, key: str, number: int) -> None:
    ResearchSource.objects.create(session=session, number=number, key=key, adapter="local", kind="local", title=key)


def test_keys_read_spans_the_watch_topic_and_all_its_runs_on_every_backend(alice, bob):
    topic = _session(alice)
    first, second = _session(alice, watch_of=topic), _session(alice, watch_of=topic)
    other = _session(bob)
    _source(topic, "local:a", 1)
    _source(first, "local:b", 1)
    _source(second, "local:c", 1)
    _source(second, "local:a", 2)
    _source(other, "local:z", 1)
    # a run sees what the topic and every run read, never another topic's sources
    assert research_keys_read(session=second) == {"local:a", "local:b", "local:c"}
    assert research_keys_read(session=topic) == {"local:a", "local:b", "local:c"}
    assert research_keys_read(session=other) == {"local:z"}
