"""The research pipeline over the `local` source (the World Graph), eager Celery, real PG/FalkorDB/Redis."""

from __future__ import annotations

import pytest

from billing.models import Hold, HoldStatus
from billing.services import credit_balance
from exograph.core.scope import Scope
from exograph.documents.models import Document, DocumentStatus
from exograph.graphs.models import GraphKind
from exograph.graphs.selectors import search_entities
from research.models import ResearchSource, ResearchStatus, ResearchStep
from research.services import research_session_create

pytestmark = pytest.mark.django_db(transaction=True)


def test_session_reads_world_sources_into_its_graph_and_reports_with_citations(alice, fund, quantum_world):
    fund(alice, 100)
    session = research_session_create(actor=alice, query="quantum error correction with surface codes")
    session.refresh_from_db()
    assert session.status == ResearchStatus.COMPLETED, (session.status, session.error)
    assert session.graph is not None and session.graph.kind == GraphKind.RESEARCH
    assert session.graph.name == "Research: quantum error correction with surface codes"
    report = session.report
    assert report["summary"].startswith("Found 0 academic papers and 0 technical articles")
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
