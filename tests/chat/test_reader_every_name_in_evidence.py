"""The extractive reader on a question naming something the evidence never names (issue 26), in words of our own:
"Which prize did the Halden Quartet win in Vienna?" over notes that never mention Vienna is not answered with the
prize it won elsewhere; an adverb opening the question ("Approximately", "Roughly") is no name the evidence must
hold. Run as chat runs it (MiniLM and the offline NER)."""

from __future__ import annotations

import pytest

from tests.chat.reading import read_as_chat

QUARTET = (
    "The Halden Quartet won the Morrow Prize in Salzburg in 2019.",
    "The quartet was founded in Bergen in 2008 by the cellist Ingrid Aas.",
)


@pytest.mark.parametrize(
    "question",
    ["Which prize did the Halden Quartet win in Vienna?", "Who founded the Halden Quartet's Oslo choir?"],
)
def test_a_question_naming_what_the_evidence_never_names_is_not_answered(question):
    got = read_as_chat(question, *QUARTET, title="notes.txt")
    assert not got.answered, got


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Approximately what year was the Halden Quartet founded?", "2008"),
        ("Which prize did the Halden Quartet win in Salzburg?", "Morrow Prize"),
    ],
)
def test_an_opening_adverb_is_no_name(question, answer):
    got = read_as_chat(question, *QUARTET, title="notes.txt")
    assert got.answered and got.short == answer, got
