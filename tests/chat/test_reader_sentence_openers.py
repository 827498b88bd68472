"""The extractive reader on names at the start of a clause (issue 26), in words of our own: "Because the University
of Leiden did not then admit women ..." names the University of Leiden, not "Because the University of Leiden";
a conjunction or adverb opening the sentence is no part of the name after it. Run as chat runs it."""

from __future__ import annotations

import pytest

from tests.chat.reading import read_as_chat


@pytest.mark.parametrize(
    ("question", "text", "answer"),
    [
        (
            "Which university did she want to attend?",
            "Because the University of Leiden did not then admit women, she studied privately in Utrecht.",
            "University of Leiden",
        ),
        (
            "Which company designed the car?",
            "Though Fenwick Motors designed the car, its engine was built elsewhere.",
            "Fenwick Motors",
        ),
    ],
)
def test_an_opening_conjunction_is_no_part_of_a_name(question, text, answer):
    got = read_as_chat(question, text, title="notes.txt")
    assert got.answered and got.short == answer, got
