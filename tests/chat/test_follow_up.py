"""A follow-up question in a chat session reads against the session's earlier question (issue 26): after asking
what a note's purchase cost, "And who sold it?" is answered with the seller; a question naming its own subject is
retrieved alone; a first question with a pronoun and no earlier turn is asked as it stands. Through the real
pipeline (REST upload of a plain-text note, offline extraction, chat). Invented names, questions in other words
than the note and than the code's examples."""

from __future__ import annotations

import pytest

from billing.services import credits_grant_admin
from exograph.chat import services

pytestmark = pytest.mark.django_db

MESSAGES = "/api/v1/chat/messages/"
BELL_NOTE = (
    "Harbour committee minutes\n\n"
    "The committee agreed to buy a diving bell from Ostrander Marine for 2,300 pounds. "
    "The bell will be stored in the boathouse at Quillan Point."
)
TELESCOPE_NOTE = (
    "Observatory society newsletter\n\n"
    "The society keeps its brass telescope in the tower room of Hensley Hall. "
    "The telescope was donated by the astronomer Mirren Holt."
)


def _upload(client, text: str, title: str, capture) -> str:  # type: ignore[no-untyped-def]
    with capture(execute=True):
        response = client.post("/api/v1/documents/", {"text": text, "title": title}, format="json")
    assert response.status_code == 201, response.json()
    document_id = str(response.json()["id"])
    assert client.get(f"/api/v1/documents/{document_id}/").json()["status"] == "processed"
    return document_id


@pytest.fixture
def notes(alice, alice_client, django_capture_on_commit_callbacks):  # type: ignore[no-untyped-def]
    credits_grant_admin(account=alice, amount=300, actor=None, note="tests")
    bell = _upload(alice_client, BELL_NOTE, "Harbour minutes", django_capture_on_commit_callbacks)
    telescope = _upload(alice_client, TELESCOPE_NOTE, "Observatory newsletter", django_capture_on_commit_callbacks)
    return {"bell": bell, "telescope": telescope}


@pytest.fixture
def asked(monkeypatch):  # type: ignore[no-untyped-def]
    """The questions chat retrieval was given, in order (the real retrieval still runs)."""
    questions: list[str] = []
    real = services.evidence_retrieve

    def recording(**kwargs):  # type: ignore[no-untyped-def]
        questions.append(kwargs["question"])
        return real(**kwargs)

    monkeypatch.setattr(services, "evidence_retrieve", recording)
    return questions


def _ask(client, message: str, session_id: str | None = None, engine: str = "rag") -> dict:  # type: ignore[no-untyped-def,type-arg]
    payload = {"message": message, "reasoning_engine": engine}
    if session_id:
        payload["session_id"] = session_id
    response = client.post(MESSAGES, payload, format="json")
    assert response.status_code == 201, response.json()
    return dict(response.json())


@pytest.mark.parametrize("engine", ["rag", "graph"])
def test_a_follow_up_is_answered_from_the_earlier_question(alice_client, notes, asked, engine):  # type: ignore[no-untyped-def]
    first = _ask(alice_client, "What did the diving bell cost the committee?", engine=engine)
    assert first["answered"] is True, first["answer"]
    assert "2,300" in first["answer"], first["answer"]
    second = _ask(alice_client, "And who sold it?", session_id=first["session_id"], engine=engine)
    assert second["answered"] is True, second["answer"]
    assert "Ostrander Marine" in second["answer"], second["answer"]
    assert "Ostrander Marine" in (second["short_answer"] or ""), second["short_answer"]
    # retrieval read the earlier question's words with the new message
    assert "diving bell" in asked[1] and "who sold it" in asked[1], asked


def test_a_question_with_its_own_names_is_retrieved_alone(alice_client, notes, asked):  # type: ignore[no-untyped-def]
    first = _ask(alice_client, "What did the diving bell cost the committee?")
    second = _ask(alice_client, "Who gave Hensley Hall its brass telescope?", session_id=first["session_id"])
    assert asked[1] == "Who gave Hensley Hall its brass telescope?", asked
    assert second["answered"] is True, second["answer"]
    assert "Mirren Holt" in second["answer"], second["answer"]
    assert "Ostrander" not in second["answer"] and "bell" not in second["answer"], second["answer"]


def test_a_first_question_with_a_pronoun_is_asked_as_it_stands(alice_client, notes, asked):  # type: ignore[no-untyped-def]
    body = _ask(alice_client, "And who sold it?")
    assert asked == ["And who sold it?"], asked
    assert body["answered"] is False, body["answer"]


def test_a_follow_up_is_typed_by_its_own_wh_word_and_a_relative_that_is_no_pointer_back():
    from exograph.chat.followup import is_follow_up
    from exograph.core.llm.extractive_asked import _answer_type

    # the reader reads "earlier question + follow-up": the follow-up, opener and all, says what is asked
    assert _answer_type("When was the granary put up? And who runs it today?") == "person"
    assert _answer_type("Who keeps the granary? But where does it stand?") == "place"
    # "that" here joins a clause; the question stands on its own
    assert not is_follow_up("Who owns the firm that repairs the granary roof?")
    assert is_follow_up("And who repaired it?")
