"""The extractive reader following a chain through a company (issue 26), in words of our own: the bridge a first
sentence names with its legal form ("Harrow Pumps Ltd is recalling its HP-7 pump") is the same company a second
sentence names without it ("Harrow Pumps is based in Derby"), so "Where is the maker of the HP-7 pump located?" is
answered with the far end. Run as chat runs it (MiniLM and the offline NER)."""

from __future__ import annotations

import pytest

from tests.chat.reading import read_as_chat

RECALL = (
    "Harrow Pumps Ltd is recalling its HP-7 garden pump because the cable can fray.",
    "Harrow Pumps is based in Derby and was founded in 1979. About 9,000 pumps were sold.",
)


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Where is the maker of the HP-7 pump located?", "Derby"),
        ("In which city is the firm behind the HP-7 pump based?", "Derby"),
    ],
)
def test_a_bridge_named_with_its_legal_form_leads_to_the_far_end(question, answer):
    got = read_as_chat(question, *RECALL, title="recall.txt")
    assert got.answered and got.short == answer, got
