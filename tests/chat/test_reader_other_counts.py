"""The extractive reader's link check on another count and a possessive role (issue 26), in words of our own: "How
many county caps has Reyes won?" over notes counting his county goals is refused (they count another thing of the
county), and "Who is the landlord's agent?" over notes that name only the landlord asks for the agent, not the
landlord. Run as chat runs it (MiniLM and the offline NER)."""

from __future__ import annotations

import pytest

from tests.chat.reading import read_as_chat

SEASON = (
    "Dale Reyes plays for Ashcombe Rovers in the Northern Counties League.",
    "Last season Reyes scored 19 county goals and was named player of the year.",
)
LEASE = (
    "The lease of Unit 4, Granary Yard, runs for ten years from 1 April 2026.",
    "The landlord's name is Brookfield Estates Ltd and the tenant is Pell Architects LLP.",
)


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("How many county caps has Reyes won?", None),
        ("How many county goals did Reyes score last season?", "19"),
    ],
)
def test_a_count_of_another_thing_is_refused(question, answer):
    got = read_as_chat(question, *SEASON, title="rovers.txt")
    assert got.answered is (answer is not None), got
    assert answer is None or got.short == answer, got


def test_a_possessive_asks_for_its_own_role():
    got = read_as_chat("Who is the landlord's agent?", *LEASE, title="lease.txt")
    assert not got.answered and not got.short, got
