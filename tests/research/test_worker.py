"""Research through a REAL Celery worker process and the real broker (not eager): a whole session end to end,
and a worker child killed mid-session (SIGKILL) that resumes where it stopped without charging a step twice."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from django.conf import settings

from billing.models import CreditEntry, EntryKind, Hold, HoldStatus
from billing.services import credit_balance
from exograph.core.scope import Scope
from research.models import ResearchSession, ResearchSource, ResearchStatus, ResearchStep
from tests.factories import search_entities
from tests.fakes.llm_chat import FakeOpenAIChatServer
from tests.faults.conftest import database_url, tasks_via_broker

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

URL = "/api/v1/research/"


@pytest.fixture
def start_worker(tmp_path) -> Iterator[Callable[..., tuple[subprocess.Popen[bytes], Path]]]:
    """`celery worker` (prefork, one child) on the research, ingest and default queues; stopped afterwards."""
    started: list[subprocess.Popen[bytes]] = []
    logs = []

    def start(**extra_env: str) -> tuple[subprocess.Popen[bytes], Path]:
        env = {
            **os.environ,
            "DATABASE_URL": database_url(),
            "FALKORDB_URL": settings.FALKORDB_URL,
            "REDIS_URL": settings.REDIS_URL,
            "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
            "CELERY_TASK_ALWAYS_EAGER": "0",
            "DJANGO_SECRET_KEY": settings.SECRET_KEY,
            "EXOGRAPH_VAR_DIR": str(tmp_path / "worker-var"),
            "DJANGO_SECURE_SSL_REDIRECT": "0",
            "RESEARCH_INGEST_POLL_SECONDS": "0.5",
            **extra_env,
        }
        log_path = tmp_path / f"worker-{len(started)}.log"
        log = log_path.open("wb")
        logs.append(log)
        worker = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "exograph", "worker", "-Q", "research,ingest,default",
             "--pool", "prefork", "--concurrency", "1", "--without-gossip", "--without-mingle",
             "--without-heartbeat", "-l", "info", "-n", f"research-test-{os.getpid()}-{len(started)}@%h"],
            cwd=str(settings.BASE_DIR), env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        started.append(worker)
        return worker, log_path

    try:
        with tasks_via_broker():
            yield start
    finally:
        for worker in started:
            worker.terminate()
            try:
                worker.wait(timeout=30)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait(timeout=10)
        for log in logs:
            log.close()


def _wait(
    condition: Callable[[], bool], *, timeout: float, what: str, worker: subprocess.Popen[bytes], log: Path
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        assert worker.poll() is None, log.read_text(errors="replace")[-4000:]
        time.sleep(0.3)
    raise AssertionError(f"{what} did not happen within {timeout}s\n" + log.read_text(errors="replace")[-4000:])


def _status(session_id: str) -> str | None:
    return ResearchSession.objects.filter(id=session_id).values_list("status", flat=True).first()


def test_session_runs_end_to_end_on_a_real_worker_and_its_graph_serves_search_and_chat(
    alice, alice_client, fund, quantum_world, start_worker
):
    fund(alice, 100)
    worker, log = start_worker()
    response = alice_client.post(URL, {"query": "quantum error correction with surface codes"}, format="json")
    assert response.status_code == 202, response.json()
    session_id = response.json()["id"]
    _wait(
        lambda: _status(session_id) in ("completed", "failed"), timeout=300, what="session done", worker=worker, log=log
    )
    body = alice_client.get(f"{URL}{session_id}/").json()
    assert body["status"] == "completed", body
    assert "research.research_session_run" in log.read_text() and "documents.document_index" in log.read_text()
    assert len(body["report"]["sources"]) == 3 and body["report"]["findings"]
    assert body["progress"]["percent"] == 100 and body["progress"]["sources_read"] == 3
    assert body["credits_spent"] <= body["credits_held"] == 30
    assert credit_balance(account=alice) == 100 - body["credits_spent"]
    hits = search_entities(user=alice, query="surface codes", scope=Scope.PRIVATE, graph_id=body["graph_id"])
    assert hits
    answer = alice_client.post(
        "/api/v1/chat/messages/",
        {"message": "What do surface codes protect?", "graph_id": body["graph_id"], "reasoning_engine": "graph"},
        format="json",
    )
    assert answer.status_code == 201, answer.json()
    sources = {s["document_id"] for s in body["report"]["sources"]}
    assert {item["document_id"] for item in answer.json()["evidence"]} & sources


class _SlowSynthesis(FakeOpenAIChatServer):
    """Plans at once; holds the first synthesis request until released (the worker is killed meanwhile)."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.syntheses = 0

    def handle(self, request):  # type: ignore[no-untyped-def]
        body: dict[str, Any] = request.json() or {}
        prompt = str((body.get("messages") or [{}])[-1].get("content", ""))
        if "Numbered sources" in prompt:
            self.syntheses += 1
            if self.syntheses == 1:
                self.release.wait(timeout=120)
            self.queue('{"findings": [{"text": "Surface codes protect logical qubits.", "citations": [1]}]}')
        else:
            self.queue("surface code threshold\nlogical qubits")
        return super().handle(request)


def test_worker_killed_mid_session_resumes_without_charging_a_step_twice(alice, fund, quantum_world, start_worker):
    from research.services import research_session_create

    fund(alice, 100)
    with _SlowSynthesis() as llm:
        worker, log = start_worker(
            RESEARCH_PROVIDER="openai", LLM_BASE_URL=llm.base_url, LLM_API_KEY=llm.api_key,
            CHAT_SNAP_MODEL="fast-model", LLM_TIMEOUT_SECONDS="150", LLM_MAX_RETRIES="0",
        )  # fmt: skip
        session = research_session_create(actor=alice, query="quantum error correction")
        _wait(lambda: llm.syntheses >= 1, timeout=300, what="synthesis asked", worker=worker, log=log)
        before = {s.key: s.credits for s in ResearchStep.objects.filter(session=session)}
        assert {"plan", "search:0", "select"} <= set(before) and len([k for k in before if k.startswith("read:")]) == 3
        children = psutil.Process(worker.pid).children()
        assert len(children) == 1
        children[0].send_signal(signal.SIGKILL)  # the pool child dies mid-task: the message goes back to the queue
        llm.release.set()
        _wait(lambda: _status(str(session.id)) in ("completed", "failed"), timeout=240, what="resumed session done",
              worker=worker, log=log)  # fmt: skip
    session.refresh_from_db()
    assert session.status == ResearchStatus.COMPLETED, (session.error, log.read_text()[-3000:])
    assert "WorkerLostError" in log.read_text() or "signal 9" in log.read_text()
    assert llm.syntheses == 2  # the interrupted step ran again ...
    assert sum(1 for r in llm.requests if "Numbered sources" not in str(r.json())) == 1  # ... the plan did not
    steps = {s.key: s.credits for s in ResearchStep.objects.filter(session=session)}
    assert {k: v for k, v in steps.items() if k != "synthesise"} == before  # nothing before it was redone
    captures = CreditEntry.objects.filter(kind=EntryKind.CAPTURE, hold_id=session.hold_id)
    assert captures.count() == len([v for v in steps.values() if v])  # one capture per priced step
    hold = Hold.objects.get(pk=session.hold_id)
    assert hold.status == HoldStatus.CLOSED and hold.captured == sum(steps.values()) == session.credits_spent
    assert session.credits_spent <= session.budget_credits
    assert ResearchSource.objects.filter(session=session).count() == 3
    assert session.report["findings"] == [{"text": "Surface codes protect logical qubits.", "citations": [1]}]
