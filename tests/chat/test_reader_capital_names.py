"""The extractive reader on a one-word name (issue 26), in words of our own: "Who wrote Harvest?" asks about the
novel Harvest, so notes that write only the common word ("the harvest report is written by ...") do not name it and the question is
refused; notes that write the name answer it. Run as chat runs it (MiniLM and the offline NER)."""

from __future__ import annotations

from tests.chat.reading import read_as_chat

SUPPER = (
    "The harvest supper is held in the village hall at Ashby every October.",
    "The harvest report is written each year by the parish clerk, Ann Vole, and read out at the supper.",
)
NOVEL = (
    "Harvest is a novel by the English writer Jim Crace, published in 2013.",
    "It was shortlisted for the Man Booker Prize.",
)


def test_a_name_written_only_as_a_common_word_is_not_named():
    got = read_as_chat("Who wrote Harvest?", *SUPPER, title="ashby.txt")
    assert not got.answered and not got.short, got


def test_the_name_written_as_a_name_is_answered():
    got = read_as_chat("Who wrote Harvest?", *NOVEL, title="harvest.txt")
    assert got.answered and got.short == "Jim Crace", got
