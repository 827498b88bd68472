"""The `local` source reads the owner's own private documents in a private session, and only there: a private
session cites the owner's uploaded notes where they are, not copied and read free (never another account's), a
world session reads no private text, and a note already in the session's graph is cited where it is too. Eager Celery, real stores, both databases."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from billing.models import WorldUsage
from billing.services import credit_balance
from exograph.accounts.models import User
from exograph.core.scope import Scope
from exograph.documents.models import Document, DocumentStatus
from exograph.graphs.models import Graph, GraphKind
from research.models import ResearchSession, ResearchSource, ResearchStatus, ResearchStep
from research.services import research_session_create

pytestmark = pytest.mark.django_db(transaction=True)

# alice's note says "greenhouse", "heater", "frost"; the topics below ask about it in other words.
ALICE_NOTE = (
    "Greenhouse winter log",
    "The greenhouse heater runs on bottled propane from November until March. "
    "Bubble wrap pinned inside the glass keeps the night temperature above five degrees. "
    "A frost alarm on the potting bench rings when the air drops below two degrees.",
)
ALICE_TOPIC = "keeping a glasshouse warm through cold nights"
# charlie's note is on the same subject, in his own private graph.
CHARLIE_NOTE = (
    "Conservatory heating diary",
    "The conservatory paraffin burner keeps the orange trees warm during cold nights. "
    "Fleece covers over the citrus pots stop the leaves from freezing in January.",
)
WORLD_ARTICLE = (
    "Frost protection for small glasshouses",
    "Gardeners protect a small glasshouse from frost with horticultural fleece over the seedlings. "
    "An electric fan heater with a thermostat keeps the air above freezing on cold nights.",
    "https://garden.example.org/frost",
)
SNAP = {"plan": 2, "search": 1, "read": 3, "synthesise": 5}


@pytest.fixture
def upload_note(api_client_for, fund) -> Callable[..., Document]:  # type: ignore[no-untyped-def]
    """A text note uploaded through REST into the user's private documents graph, processed (eager Celery)."""

    def upload(user: User, title: str, text: str, *, graph_id: str | None = None) -> Document:
        fund(user, 20)
        name = title.lower().replace(" ", "-") + ".txt"
        payload: dict[str, object] = {"file": SimpleUploadedFile(name, text.encode())}
        if graph_id:
            payload["graph_id"] = graph_id
        response = api_client_for(user).post("/api/v1/documents/", payload, format="multipart")
        assert response.status_code == 201, response.json()
        document = Document.objects.get(id=response.json()["id"])
        assert document.status == DocumentStatus.PROCESSED, (document.status, document.failure_reason)
        assert document.graph.scope == Scope.PRIVATE
        return document

    return upload


def _name(document: Document) -> str:
    return document.title or document.filename  # an uploaded note is named by its file


def _report(session: ResearchSession) -> dict[str, Any]:
    session.refresh_from_db()
    assert session.status == ResearchStatus.COMPLETED, (session.status, session.error, session.note)
    assert session.report is not None
    return dict(session.report)


def _read_steps(session: ResearchSession) -> list[ResearchStep]:
    return list(ResearchStep.objects.filter(session=session, key__startswith="read:"))


def test_private_session_finds_the_owners_note_asked_in_other_words_and_cites_it(alice, fund, upload_note):
    note = upload_note(alice, *ALICE_NOTE)
    fund(alice, 100)
    before = credit_balance(account=alice)

    session = research_session_create(actor=alice, query=ALICE_TOPIC)

    report = _report(session)
    assert [s["title"] for s in report["sources"]] == [_name(note)], report["sources"]
    number = report["sources"][0]["number"]
    assert report["findings"] and any(number in f["citations"] for f in report["findings"]), report
    # the note is cited where it is (alice's own documents graph): not copied into the session's research graph,
    # which would charge her for reading her own text and list it twice among her documents
    source = ResearchSource.objects.get(session=session)
    assert source.key == f"local:{note.id}" and source.kind == "local"
    assert source.document_id == note.id
    assert not Document.objects.filter(graph_id=session.graph_id).exists()
    assert Document.objects.filter(owner=alice, deleted_at__isnull=True).count() == 1
    # ... so the "Research: ..." graph it made holds nothing: it is not left behind, empty, atop her graph list (a
    # newcomer's make run probe: six such graphs, the explorer opening the first). The session keeps its name.
    session.refresh_from_db()
    assert session.graph_id is None and session.graph_name.startswith("Research: ")
    assert not Graph.objects.filter(owner=alice, kind=GraphKind.RESEARCH).exists()
    assert "1 source from your own documents" in report["summary"] and "World Graph" not in report["summary"]
    # money: plan, searches and the synthesis; the read of her own note is free; no contributor is paid
    assert [step.credits for step in _read_steps(session)] == [0]
    searches = ResearchStep.objects.filter(session=session, key__startswith="search:").count()
    assert session.credits_spent == SNAP["plan"] + searches * SNAP["search"] + SNAP["synthesise"]
    assert credit_balance(account=alice) == before - session.credits_spent
    assert not WorldUsage.objects.filter(querier=alice).exists()


def test_no_session_reads_another_accounts_notes_and_a_world_session_reads_no_private_text(
    alice, charlie, fund, upload_note
):
    upload_note(charlie, *CHARLIE_NOTE)
    note = upload_note(alice, *ALICE_NOTE)
    fund(alice, 100)

    private = research_session_create(actor=alice, query="heating a glasshouse or conservatory on cold nights")
    report = _report(private)
    assert [s["title"] for s in report["sources"]] == [_name(note)]
    assert "paraffin" not in str(report).casefold()

    before = credit_balance(account=alice)
    world = research_session_create(actor=alice, query=ALICE_TOPIC, scope=Scope.WORLD)
    report = _report(world)
    assert report["sources"] == [] and not ResearchSource.objects.filter(session=world).exists()
    assert "propane" not in str(report).casefold() and "No sources were found" in world.note
    assert not Document.objects.filter(graph_id=world.graph_id).exists()
    # nothing read: planning and searching only, no read and no synthesis charged
    assert not _read_steps(world)
    searches = ResearchStep.objects.filter(session=world, key__startswith="search:").count()
    assert world.credits_spent == SNAP["plan"] + searches * SNAP["search"]
    assert credit_balance(account=alice) == before - world.credits_spent


def test_a_world_session_reads_world_articles_but_never_the_owners_private_note(
    alice, bob, fund, upload_note, world_source
):
    article = world_source(bob, title=WORLD_ARTICLE[0], text=WORLD_ARTICLE[1], url=WORLD_ARTICLE[2])
    note = upload_note(alice, *ALICE_NOTE)
    fund(alice, 100)

    world = research_session_create(actor=alice, query=ALICE_TOPIC, scope=Scope.WORLD)
    report = _report(world)
    assert [s["title"] for s in report["sources"]] == [article.title]
    assert "propane" not in str(report).casefold()
    copies = Document.objects.filter(graph_id=world.graph_id)
    assert [d.title for d in copies] == [article.title] and world.graph is not None
    assert world.graph.scope == Scope.WORLD
    # the same topic in a private session reads both: the shared article and alice's own note
    private = research_session_create(actor=alice, query=ALICE_TOPIC)
    assert sorted(s["title"] for s in _report(private)["sources"]) == sorted([article.title, _name(note)])


def test_a_note_already_in_the_sessions_graph_is_cited_not_copied_and_its_read_is_free(alice, fund, upload_note):
    note = upload_note(alice, *ALICE_NOTE)
    fund(alice, 100)
    in_graph = Document.objects.filter(graph_id=note.graph_id).count()

    session = research_session_create(actor=alice, query=ALICE_TOPIC, graph_id=note.graph_id)

    report = _report(session)
    assert [s["document_id"] for s in report["sources"]] == [str(note.id)]
    assert report["findings"]
    assert Document.objects.filter(graph_id=note.graph_id).count() == in_graph
    assert [step.credits for step in _read_steps(session)] == [0]
    searches = ResearchStep.objects.filter(session=session, key__startswith="search:").count()
    assert session.credits_spent == SNAP["plan"] + searches * SNAP["search"] + SNAP["synthesise"]


def test_a_private_note_off_the_topic_is_not_read_and_the_synthesis_is_not_charged(alice, fund, upload_note):
    upload_note(alice, *ALICE_NOTE)
    fund(alice, 100)

    session = research_session_create(actor=alice, query="medieval tax records of coastal fishing towns")

    assert _report(session)["sources"] == [] and "No sources were found" in session.note
    assert (
        not _read_steps(session)
        and not ResearchStep.objects.filter(session=session, credits__gt=0).filter(key="synthesise").exists()
    )


def test_a_copy_read_into_an_earlier_private_session_is_not_a_source_again_its_world_original_is(
    alice, fund, quantum_world
):
    fund(alice, 100)
    topic = "quantum error correction with surface codes"
    first = research_session_create(actor=alice, query=topic)
    assert len(_report(first)["sources"]) == 3
    # the earlier session's graph (alice's, private) now holds copies of bob's three world articles
    assert Document.objects.filter(graph_id=first.graph_id, graph__scope=Scope.PRIVATE).count() == 3

    second = research_session_create(actor=alice, query=topic)

    assert len(_report(second)["sources"]) == 3
    originals = {f"local:{document.id}" for document in quantum_world}
    assert set(ResearchSource.objects.filter(session=second).values_list("key", flat=True)) == originals
    # bob, who contributed the originals, is paid for both sessions' reads
    assert WorldUsage.objects.filter(querier=alice, contributor_ids=[bob_id(quantum_world)]).count() == 2


def bob_id(documents: list[Document]) -> int:
    return int(documents[0].owner_id)
