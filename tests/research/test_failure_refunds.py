"""A session that fails through our fault (a crash in our code, a dependency down past its retries) gives back
every credit its steps captured, but for the sources it read into the user's graph, and says so; it leaves no
empty research graph behind. Eager Celery: the task's own failure handling runs (research/tasks.py)."""

from __future__ import annotations

import pytest
from django.db.models import Sum

from billing.models import CreditEntry, Hold, HoldStatus
from billing.services import credit_balance
from exograph.core.errors import ServiceUnavailable
from exograph.documents.models import Document
from exograph.graphs.models import Graph
from research.models import ResearchSession, ResearchStatus, ResearchStep
from research.services import research_session_create, research_session_fail

pytestmark = pytest.mark.django_db(transaction=True)


def _ledger(user) -> int:  # type: ignore[no-untyped-def]
    return int(CreditEntry.objects.filter(account__user=user).aggregate(total=Sum("amount"))["total"] or 0)


def test_a_crash_in_our_code_refunds_every_captured_step_and_drops_the_empty_graph(
    alice, fund, quantum_world, monkeypatch
):
    def crash(self, lists):  # type: ignore[no-untyped-def]
        raise RuntimeError("a bug of ours")

    monkeypatch.setattr("research.services.pipeline._Run.select", crash)
    fund(alice, 100)
    session = research_session_create(actor=alice, query="quantum error correction with surface codes")
    graph_id = session.graph_id
    session.refresh_from_db()
    assert session.status == ResearchStatus.FAILED
    # plan (2) and three searches (1 each) had captured 5 before the crash: all given back
    assert sum(ResearchStep.objects.filter(session=session).values_list("credits", flat=True)) == 5
    assert session.error == (
        "An internal error stopped this session. Nothing was charged: the 5 credits its steps used were refunded."
    )
    assert session.credits_spent == 0
    assert credit_balance(account=alice) == 100 == _ledger(alice)
    assert Hold.objects.get(pk=session.hold_id).status == HoldStatus.CLOSED
    # the "Research: …" graph it created holds nothing: gone; the session keeps its name
    assert not Graph.objects.filter(id=graph_id).exists()
    assert session.graph_id is None and session.graph_name.startswith("Research: ")
    # failing it again changes nothing (the refund is once)
    research_session_fail(session=session, reason="again")
    assert credit_balance(account=alice) == 100 == _ledger(alice)


def test_a_dependency_down_past_its_retries_keeps_only_the_reads_delivered_into_the_graph(
    alice, fund, quantum_world, monkeypatch, settings
):
    settings.RESEARCH_TASK_MAX_RETRIES = 0

    def down(**kwargs):  # type: ignore[no-untyped-def]
        raise ServiceUnavailable("The language model is unavailable.")

    monkeypatch.setattr("research.services.pipeline.research_synthesise", down)
    fund(alice, 100)
    session = research_session_create(actor=alice, query="quantum error correction with surface codes")
    session.refresh_from_db()
    assert session.status == ResearchStatus.FAILED
    # plan 2 + searches 3 refunded; the three reads (3 each) put three documents into alice's graph: kept
    assert session.credits_spent == 9
    assert session.error == (
        "The language model is unavailable. 9 credits stay charged for the 3 sources read into graph "
        f"{session.graph_name!r}; the other 5 credits were refunded."
    )
    assert credit_balance(account=alice) == 91 == _ledger(alice)
    assert Document.objects.filter(graph_id=session.graph_id).count() == 3


def test_a_session_failed_by_the_users_doing_keeps_its_steps_paid(alice, fund, quantum_world):
    fund(alice, 100)
    session = research_session_create(actor=alice, query="quantum error correction with surface codes")
    ResearchSession.objects.filter(pk=session.pk).update(status=ResearchStatus.RUNNING)
    session.refresh_from_db()
    research_session_fail(session=session, reason="The target graph was deleted.", refund=False)
    session.refresh_from_db()
    assert session.error == "The target graph was deleted."
    assert credit_balance(account=alice) == 100 - session.credits_spent == _ledger(alice)


def test_a_refunded_session_gives_its_credits_back_to_the_api_keys_monthly_cap(alice, fund, quantum_world, monkeypatch):
    from billing.services.caps import key_spent_this_month, spending_key
    from exograph.accounts.services import api_key_create

    def crash(self, lists):  # type: ignore[no-untyped-def]
        raise RuntimeError("a bug of ours")

    monkeypatch.setattr("research.services.pipeline._Run.select", crash)
    fund(alice, 100)
    key = api_key_create(actor=alice, name="agent", monthly_credit_cap=30).key
    with spending_key(key_id=key.pk, capped=True):
        failed = research_session_create(actor=alice, query="quantum error correction with surface codes")
    failed.refresh_from_db()
    assert failed.status == ResearchStatus.FAILED and failed.credits_spent == 0
    # the 5 credits its steps captured were refunded to the account and to the key that held them
    assert key_spent_this_month(key_ids=[key.pk]) == {key.pk: 0}
    monkeypatch.undo()
    with spending_key(key_id=key.pk, capped=True):
        research_session_create(actor=alice, query="decoders for surface codes", budget_credits=30)  # the whole cap
