"""The run task's retries are Celery's: exponential backoff with full jitter, capped, at most
RESEARCH_TASK_MAX_RETRIES; past them the session fails (and is refunded: test_failure_refunds.py)."""

from __future__ import annotations

import pytest
from celery.exceptions import Retry

from exograph.core.errors import ServiceUnavailable
from research.models import ResearchSession, ResearchStatus
from research.services.running import RETRY_WAIT_SECONDS
from research.tasks import research_session_run_task

pytestmark = pytest.mark.django_db


def _down(**kwargs):  # type: ignore[no-untyped-def]
    raise ServiceUnavailable("The language model is unavailable.")


def _countdowns(monkeypatch, session_id: str, *, retries: int, runs: int) -> list[tuple[int, int]]:  # type: ignore[no-untyped-def]
    """(countdown, max_retries) the task asks Celery's retry for, over `runs` runs at attempt `retries`."""
    asked = []

    def retry(**kwargs):  # type: ignore[no-untyped-def]
        asked.append((kwargs["countdown"], kwargs["max_retries"]))
        return Retry(exc=kwargs["exc"], when=kwargs["countdown"])

    monkeypatch.setattr(research_session_run_task, "retry", retry)
    research_session_run_task.push_request(retries=retries)
    try:
        for _ in range(runs):
            with pytest.raises(Retry):
                research_session_run_task.run(session_id)
    finally:
        research_session_run_task.pop_request()
    return asked


def test_transient_failures_retry_with_jittered_capped_backoff(alice, monkeypatch, settings):
    settings.RESEARCH_TASK_MAX_RETRIES = 9
    monkeypatch.setattr("research.services.research_session_run", _down)
    session = ResearchSession.objects.create(owner=alice, topic="tides", budget_credits=30)

    early = _countdowns(monkeypatch, str(session.pk), retries=2, runs=40)
    assert {max_retries for _, max_retries in early} == {9}
    assert all(0 <= countdown <= 2 * 2**2 for countdown, _ in early)
    # full jitter: sessions that failed together (the LLM down) do not all come back at the same second
    assert len({countdown for countdown, _ in early}) > 1
    late = _countdowns(monkeypatch, str(session.pk), retries=8, runs=40)
    assert all(0 <= countdown <= RETRY_WAIT_SECONDS for countdown, _ in late)  # capped: the parked lease's length
    session.refresh_from_db()
    assert session.status == ResearchStatus.PENDING  # retried, not failed


def test_past_its_retries_the_session_fails_instead_of_retrying(alice, monkeypatch, settings):
    settings.RESEARCH_TASK_MAX_RETRIES = 2
    monkeypatch.setattr("research.services.research_session_run", _down)
    session = ResearchSession.objects.create(owner=alice, topic="tides", budget_credits=30)
    monkeypatch.setattr(research_session_run_task, "retry", lambda **kwargs: pytest.fail("retried past the limit"))
    research_session_run_task.push_request(retries=2)
    try:
        assert research_session_run_task.run(str(session.pk)) == "failed"
    finally:
        research_session_run_task.pop_request()
    session.refresh_from_db()
    assert session.status == ResearchStatus.FAILED and session.error.startswith("The language model is unavailable.")
