"""The extractive reader on a figure asked by its bound (issue 26), in words of our own: "How much is the largest
grant?" is answered by the sum the evidence gives as its bound ("up to 7,500 pounds"), not by another sum the notes
name ("the fund of 2 million pounds"); "What is the minimum age?" by "at least 16". Run as chat runs it (MiniLM and the
offline NER)."""

from __future__ import annotations

import pytest

from tests.chat.reading import read_as_chat

GRANTS = (
    "Grant scheme for heat pumps: guidance for householders. The Warmer Homes Fund pays up to 7,500 pounds towards "
    "an air-source heat pump for owner-occupied homes in the county.",
    "Applications open on 1 February 2027 and close when the fund of 2 million pounds is spent.",
)
CLUB = ("The rowing club takes new members aged at least 16, and the season fee is 120 pounds.",)


@pytest.mark.parametrize(
    ("question", "answer", "texts"),
    [
        ("How much is the largest grant?", "7,500 pounds", GRANTS),
        ("What is the minimum age to join the rowing club?", "16", CLUB),
    ],
)
def test_a_figure_asked_by_its_bound_is_the_one_given_as_that_bound(question, answer, texts):
    got = read_as_chat(question, *texts, title="notes.txt")
    assert got.answered and got.short == answer, got
