"""Research through a REAL Celery worker process and the real broker (not eager): a whole session end to end,
and a worker child killed mid-session (SIGKILL) that resumes where it stopped without charging a step twice."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator

import psutil
import pytest

from billing.models import CreditEntry, EntryKind, Hold, HoldStatus
from billing.services import credit_balance
from exograph.core.scope import Scope
from research.models import ResearchSession, ResearchSource, ResearchStatus, ResearchStep
from tests.factories import search_entities
from tests.fakes.llm_chat import SlowSynthesisChatServer
from tests.workers import WorkerProcess, database_url, session_stores, tasks_via_broker, wait_while_alive

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

URL = "/api/v1/research/"


@pytest.fixture
def research_worker(start_worker) -> Iterator[Callable[..., WorkerProcess]]:  # type: ignore[no-untyped-def]
    """Start a prefork worker with one child on the research, ingest and default queues of the session's stores;
    meanwhile this process sends its tasks through the broker."""

    def start(**extra_env: str) -> WorkerProcess:
        env = {"DATABASE_URL": database_url(), "RESEARCH_INGEST_POLL_SECONDS": "0.5", **extra_env}
        return start_worker(**session_stores(), queues="research,ingest,default", concurrency=1, extra_env=env)

    with tasks_via_broker():
        yield start


def _status(session_id: str) -> str | None:
    return ResearchSession.objects.filter(id=session_id).values_list("status", flat=True).first()


def test_session_runs_end_to_end_on_a_real_worker_and_its_graph_serves_search_and_chat(
    alice, alice_client, fund, quantum_world, research_worker
):
    fund(alice, 100)
    worker = research_worker()
    response = alice_client.post(URL, {"query": "quantum error correction with surface codes"}, format="json")
    assert response.status_code == 202, response.json()
    session_id = response.json()["id"]
    wait_while_alive(worker, lambda: _status(session_id) in ("completed", "failed"), timeout=300, what="session done")
    body = alice_client.get(f"{URL}{session_id}/").json()
    assert body["status"] == "completed", body
    assert "research.research_session_run" in worker.log() and "documents.document_index" in worker.log()
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


def test_worker_killed_mid_session_resumes_without_charging_a_step_twice(alice, fund, quantum_world, research_worker):
    from research.services import research_session_create

    fund(alice, 100)
    with SlowSynthesisChatServer() as llm:
        worker = research_worker(
            RESEARCH_PROVIDER="openai", LLM_BASE_URL=llm.base_url, LLM_API_KEY=llm.api_key,
            CHAT_SNAP_MODEL="fast-model", LLM_TIMEOUT_SECONDS="150", LLM_MAX_RETRIES="0",
        )  # fmt: skip
        session = research_session_create(actor=alice, query="quantum error correction")
        wait_while_alive(worker, lambda: llm.syntheses >= 1, timeout=300, what="synthesis asked")
        before = {s.key: s.credits for s in ResearchStep.objects.filter(session=session)}
        assert {"plan", "search:0", "select"} <= set(before) and len([k for k in before if k.startswith("read:")]) == 3
        children = psutil.Process(worker.process.pid).children()
        assert len(children) == 1
        children[0].send_signal(signal.SIGKILL)  # the pool child dies mid-task: the message goes back to the queue
        llm.release.set()
        done = ("completed", "failed")
        wait_while_alive(worker, lambda: _status(str(session.id)) in done, timeout=240, what="resumed session done")
    session.refresh_from_db()
    assert session.status == ResearchStatus.COMPLETED, (session.error, worker.log()[-3000:])
    assert "WorkerLostError" in worker.log() or "signal 9" in worker.log()
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
