"""The extractive reader's link check on roles and counts (issue 26), in words of our own: "Who is the chief
executive?" over notes that name only a head of sales is refused (the role's own noun, or its acronym, must be
there), and so is "How much is a three-night stay?" over notes that price only a one-night stay (a count written into
a compound is a figure the question names). Run as chat runs it (MiniLM and the offline NER)."""

from __future__ import annotations

import pytest

from tests.chat.reading import read_as_chat

FIRM = (
    "Harrow Pumps is a maker of garden pumps based in Derby.",
    "Its head of sales, Nadia Osei, said the HP-7 would return to shops in May.",
)
RUN_BY = (
    "Harrow Pumps is a maker of garden pumps based in Derby.",
    "Its CEO, Tom Birch, joined the company in 2019 from a rival.",
)
INN = (
    "The Lantern Inn is a coaching inn on the high street of Thirsk.",
    "A 1-night stay costs 95 pounds with breakfast; dogs are welcome.",
)


def test_a_role_the_passage_never_names_is_refused():
    got = read_as_chat("Who is the chief executive of Harrow Pumps?", *FIRM, title="harrow.txt")
    assert not got.answered and not got.short, got


def test_a_role_named_by_its_acronym_is_answered():
    got = read_as_chat("Who is the chief executive of Harrow Pumps?", *RUN_BY, title="harrow.txt")
    assert got.answered and got.short == "Tom Birch", got


@pytest.mark.parametrize(
    ("question", "answered"),
    [
        ("How much is a three-night stay at the Lantern Inn?", False),
        ("How much is a one-night stay at the Lantern Inn?", True),
    ],
)
def test_a_count_written_into_a_compound_must_be_the_passages(question, answered):
    got = read_as_chat(question, *INN, title="lantern.txt")
    assert got.answered is answered, got
    assert not answered or got.short == "95 pounds", got
