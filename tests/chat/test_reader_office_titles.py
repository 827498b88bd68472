"""The extractive reader on a person named with their office (issue 26), in words of our own: "signed by President
Ada Moreno" answers "Who signed the act?" with "Ada Moreno", and "Governor Tomas Lind" with "Tomas Lind": the office
is no part of the name. Run as chat runs it (MiniLM and the offline NER)."""

from __future__ import annotations

import pytest

from tests.chat.reading import read_as_chat


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("The Coastal Waters Act was signed by United States President Ada Moreno in March 2019.", "Ada Moreno"),
        ("The Coastal Waters Act was signed by Governor Tomas Lind after a long debate.", "Tomas Lind"),
    ],
)
def test_an_office_before_a_name_is_no_part_of_it(text, answer):
    got = read_as_chat("Who signed the Coastal Waters Act?", text, title="act.txt")
    assert got.answered and got.short == answer, got
