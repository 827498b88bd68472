"""The extractive reader on a full name (issue 26), in words of our own: "What is the full name of ...?" answered by
an acronym ("the NTC") is answered with the words the evidence writes it out in ("National Testing Council"); a
question not asking for the full name keeps the acronym the evidence uses. Run as chat runs it (MiniLM and the
offline NER)."""

from __future__ import annotations

from tests.chat.reading import read_as_chat

NOTES = (
    "The Orla kettle was certified as safe by the NTC in March 2025 after a six-week trial.",
    "The National Testing Council (NTC) checks electrical goods sold in Ireland and publishes its results.",
)


def test_the_full_name_asked_is_the_acronym_written_out():
    got = read_as_chat("What is the full name of the body that certified the Orla kettle?", *NOTES, title="orla.txt")
    assert got.answered and got.short == "National Testing Council", got


def test_without_full_name_the_acronym_stays():
    got = read_as_chat("Which body certified the Orla kettle?", *NOTES, title="orla.txt")
    assert got.answered and got.short == "NTC", got
