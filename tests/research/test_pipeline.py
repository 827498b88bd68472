"""The research pipeline over the `local` source (the World Graph), eager Celery, real PG/FalkorDB/Redis."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from billing.models import Hold, HoldStatus, WorldUsage
from billing.services import credit_balance
from exograph.core.scope import Scope
from exograph.documents.models import Document, DocumentStatus
from exograph.graphs.models import GraphKind
from research.models import ResearchSession, ResearchSource, ResearchStatus, ResearchStep
from research.services import research_session_create
from tests.factories import search_entities
from tests.fakes.llm_chat import FakeOpenAIChatServer
from tests.research.conftest import QUANTUM

pytestmark = pytest.mark.django_db(transaction=True)


def test_session_reads_world_sources_into_its_graph_and_reports_with_citations(alice, fund, quantum_world):
    fund(alice, 100)
    session = research_session_create(actor=alice, query="quantum error correction with surface codes")
    session.refresh_from_db()
    assert session.status == ResearchStatus.COMPLETED, (session.status, session.error)
    assert session.graph is not None and session.graph.kind == GraphKind.RESEARCH
    assert session.graph.name == "Research: quantum error correction with surface codes"
    report = session.report
    assert report["summary"].startswith("Found 3 sources from "), report["summary"]  # no "0 academic papers"
    assert len(report["sources"]) == 3
    numbers = {s["number"] for s in report["sources"]}
    assert report["findings"] and all(set(f["citations"]) <= numbers and f["citations"] for f in report["findings"])
    # provenance: each source is a processed text document of the session's graph with title, URL and type
    for source in ResearchSource.objects.filter(session=session):
        document = Document.objects.get(id=source.document_id)
        assert document.graph_id == session.graph_id and document.status == DocumentStatus.PROCESSED
        assert document.source_type == "local" and document.title == source.title
        assert document.source_url == source.url and source.url.startswith("https://")
    # money: captured per step, the rest released; never more than the budget
    hold = Hold.objects.get(pk=session.hold_id)
    assert hold.status == HoldStatus.CLOSED and hold.captured == session.credits_spent <= session.budget_credits
    assert session.credits_spent == sum(ResearchStep.objects.filter(session=session).values_list("credits", flat=True))
    assert session.credits_spent == 2 + 3 * 1 + 3 * 3 + 5  # plan, 3 searches, 3 reads, synthesis (snap prices)
    assert credit_balance(account=alice) == 100 - session.credits_spent
    hits = search_entities(user=alice, query="surface codes", scope=Scope.PRIVATE, graph_id=session.graph_id)
    assert hits
    # bob contributed the world documents it read: billing records the use (topic digest only) to pay him
    usage = WorldUsage.objects.get(querier=alice)
    assert usage.source == "research" and usage.contributor_ids == [quantum_world[0].owner_id]
    assert "surface" not in usage.query_digest


def test_budget_exhausted_mid_way_completes_with_a_note_and_never_overspends(alice, fund, quantum_world, settings):
    settings.RESEARCH_STEP_PRICES = {
        **settings.RESEARCH_STEP_PRICES,
        "snap": {**settings.RESEARCH_STEP_PRICES["snap"], "read": 10},
    }
    fund(alice, 100)
    session = research_session_create(actor=alice, query="quantum error correction with surface codes")
    session.refresh_from_db()
    assert session.status == ResearchStatus.COMPLETED, session.error
    # plan 2 + 3 searches 3 = 5; two reads of 10 leave 5, kept for the synthesis (5): the third read is skipped
    assert ResearchSource.objects.filter(session=session).count() == 2
    assert session.credits_spent == 30 == session.budget_credits
    assert "budget ran out after reading 2 of 3 sources" in session.note
    assert len(session.report["sources"]) == 2 and session.report["findings"]
    assert credit_balance(account=alice) == 70
    assert Hold.objects.get(pk=session.hold_id).status == HoldStatus.CLOSED


class _CancellingLLM(FakeOpenAIChatServer):
    """Answers the planner, but first the user cancels the session (another connection, like a web request)."""

    def handle(self, request):  # type: ignore[no-untyped-def]
        from django.db import connection

        from research.services import research_session_cancel

        try:
            session = ResearchSession.objects.get()
            research_session_cancel(actor=session.owner, session_id=str(session.id))
        finally:
            connection.close()
        return super().handle(request)


def test_cancel_while_running_stops_the_pipeline_and_releases_everything(alice, fund, quantum_world, settings):
    with _CancellingLLM() as server:
        settings.RESEARCH_PROVIDER = "openai"
        settings.LLM_BASE_URL, settings.LLM_API_KEY = server.base_url, server.api_key
        settings.CHAT_SNAP_MODEL, settings.LLM_MAX_RETRIES = "fast-model", 0
        server.queue("surface code thresholds")
        fund(alice, 100)
        session = research_session_create(actor=alice, query="quantum error correction")
    session.refresh_from_db()
    assert session.status == ResearchStatus.CANCELLED and session.completed_at is not None
    assert len(server.requests) == 1  # the plan was asked for; nothing after the cancel
    assert not ResearchStep.objects.filter(session=session).exists()  # the plan step's capture found the hold closed
    assert session.credits_spent == 0 and credit_balance(account=alice) == 100
    assert not ResearchSource.objects.filter(session=session).exists()


@pytest.mark.parametrize(("status", "code"), [(401, "upstream_error"), (503, "transient")])
def test_provider_failure_fails_the_session_with_the_reason_and_releases_the_hold(
    alice, fund, quantum_world, openai_research, settings, status, code
):
    from tests.fakes.openai_server import openai_error

    settings.RESEARCH_TASK_MAX_RETRIES = 0
    openai_research.fail_next(status, openai_error("nope"), times=3)
    fund(alice, 100)
    session = research_session_create(actor=alice, query="quantum error correction")
    session.refresh_from_db()
    assert session.status == ResearchStatus.FAILED and "openai" in session.error
    assert session.credits_spent == 0 and credit_balance(account=alice) == 100
    assert Hold.objects.get(pk=session.hold_id).status == HoldStatus.CLOSED


def test_llm_planner_and_synthesiser_citations_are_checked(alice, fund, quantum_world, openai_research):
    openai_research.queue(
        "surface code threshold\nlogical qubits",
        '{"findings": [{"text": "Surface codes protect logical qubits [1].", "citations": [1, 99]}, '
        '{"text": "Made up.", "citations": [42]}], "open_questions": ["Which decoder is fastest?"]}',
    )
    fund(alice, 100)
    session = research_session_create(actor=alice, query="quantum error correction")
    session.refresh_from_db()
    assert session.status == ResearchStatus.COMPLETED, session.error
    plan = ResearchStep.objects.get(session=session, key="plan").result["queries"]
    assert plan == ["quantum error correction", "surface code threshold", "logical qubits"]
    assert session.report["findings"] == [{"text": "Surface codes protect logical qubits.", "citations": [1]}]
    assert session.report["open_questions"] == ["Which decoder is fastest?"]
    synthesis_prompt = openai_research.bodies[1]["messages"][-1]["content"]
    assert "[1] (local)" in synthesis_prompt


def test_watch_topic_second_run_reads_only_new_sources_into_the_same_graph(alice, bob, fund, world_source):
    from research.services import research_session_watch_run, research_watch_due, research_watch_stop

    first, second, third = QUANTUM
    world_source(bob, title=first[0], text=first[1], url=first[2])
    world_source(bob, title=second[0], text=second[1], url=second[2])
    fund(alice, 100)
    topic = research_session_create(actor=alice, query="quantum error correction", watch="daily")
    topic.refresh_from_db()
    assert topic.status == ResearchStatus.COMPLETED and topic.watch == "daily" and topic.next_run_at
    assert sorted(s.title for s in ResearchSource.objects.filter(session=topic)) == sorted([first[0], second[0]])
    world_source(bob, title=third[0], text=third[1], url=third[2])
    run = research_session_watch_run(topic=topic)
    run.refresh_from_db()
    assert run.status == ResearchStatus.COMPLETED and run.watch_of_id == topic.id and run.graph_id == topic.graph_id
    assert [s.title for s in ResearchSource.objects.filter(session=run)] == [third[0]]
    assert run.budget_credits == topic.budget_credits and run.hold_id != topic.hold_id
    # a third run finds nothing new: it completes with a note and spends only planning, searching, nothing read
    empty = research_session_watch_run(topic=topic)
    empty.refresh_from_db()
    assert empty.status == ResearchStatus.COMPLETED and "No new sources" in empty.note
    assert not ResearchSource.objects.filter(session=empty).exists()
    # the schedule: due now → one run; stopped → none
    ResearchSession.objects.filter(pk=topic.pk).update(next_run_at=timezone.now() - timedelta(minutes=1))
    assert len(research_watch_due()) == 1
    research_watch_stop(session=topic)
    ResearchSession.objects.filter(pk=topic.pk).update(next_run_at=timezone.now() - timedelta(minutes=1))
    assert research_watch_due() == []


def test_completed_report_exports_and_chat_over_its_graph_cites_a_source(alice, alice_client, fund, quantum_world):
    import io

    from docx import Document as DocxDocument

    fund(alice, 100)
    session = research_session_create(actor=alice, query="quantum error correction with surface codes")
    session.refresh_from_db()
    md = alice_client.get(f"/api/v1/research/{session.id}/export/?format=md")
    assert md.status_code == 200 and md["Content-Type"].startswith("text/markdown")
    text = md.content.decode()
    assert text.startswith("# quantum error correction with surface codes") and "## Key findings" in text
    assert "](#source-1)" in text and "https://papers.example.org/surface-codes" in text
    docx = alice_client.get(f"/api/v1/research/{session.id}/export/", {"format": "docx"})
    assert docx.status_code == 200 and "attachment" in docx["Content-Disposition"]
    paragraphs = [p.text for p in DocxDocument(io.BytesIO(docx.content)).paragraphs]
    assert paragraphs[0] == "quantum error correction with surface codes" and "Key findings" in paragraphs
    # the graph is usable by chat right away: an answer over it cites one of the session's sources
    response = alice_client.post(
        "/api/v1/chat/messages/",
        {"message": "What do surface codes protect?", "graph_id": session.graph_id, "reasoning_engine": "graph"},
        format="json",
    )
    assert response.status_code == 201, response.json()
    by_document = {s["document_id"]: s for s in session.report["sources"]}
    cited = [item for item in response.json()["evidence"] if item["document_id"] in by_document]
    assert cited
    # the citation carries the source's provenance: its title and URL
    for item in cited:
        source = by_document[item["document_id"]]
        assert (item["source"], item["url"]) == (source["title"], source["url"])


def test_options_exclude_domains_and_dates_and_select_source_kinds(alice, bob, fund, world_source):
    from datetime import date

    first, second, third = QUANTUM
    world_source(bob, title=first[0], text=first[1], url=first[2], published=date(2024, 3, 1))
    world_source(bob, title=second[0], text=second[1], url=second[2], published=date(2024, 4, 1))
    world_source(bob, title=third[0], text=third[1], url=third[2], published=date(2018, 1, 1))
    fund(alice, 100)
    session = research_session_create(
        actor=alice,
        query="quantum error correction",
        sources=["local"],
        date_from=date(2020, 1, 1),
        excluded_domains=["articles.example.com"],
    )
    session.refresh_from_db()
    assert session.status == ResearchStatus.COMPLETED, session.error
    # the 2018 decoder post is out of range, the articles.example.com page is excluded
    assert [s["title"] for s in session.report["sources"]] == [first[0]]
    assert session.report["sources"][0]["published"] == "2024-03-01"


def test_watch_topics_are_in_the_beat_schedule():
    import io

    from django.core.management import call_command

    out = io.StringIO()
    call_command("setup_periodic_tasks", stdout=out)
    assert "research.tasks.research_watch_due_task" in out.getvalue()


def test_a_session_whose_hold_was_released_fails_with_the_reason_instead_of_hanging(alice, fund):
    from django.db import transaction

    from billing.services import credits_release
    from research.services import research_session_run

    fund(alice, 100)
    with transaction.atomic():  # queued on commit: released first, as the stale-hold sweep would
        session = research_session_create(actor=alice, query="quantum error correction")
        credits_release(hold=Hold.objects.get(pk=session.hold_id), reason="released after inactivity")
    session.refresh_from_db()
    assert session.status == ResearchStatus.FAILED and "released before it finished" in session.error
    assert research_session_run(session_id=str(session.id)) == "stopped"
    assert credit_balance(account=alice) == 100 and session.credits_spent == 0
