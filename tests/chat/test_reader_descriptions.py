"""The extractive reader on a newcomer's notes (a clinical trial's summary, issue 26), re-told here in other words
and other places: a sentence may call its passage's subject by a generic noun ("In 2019 the brewery was taken over
by X": the brewery is the firm the passage is about), so a chain runs through it; a name holding the question's
("Tamsin Ales" for "Tamsin") is what the question names, never a bridge from it; a date answers "when did it end"
only when the sentence dates the end (the last of "from June 2015 until September 2018", not "will open in
2021"); a price is a sum, never a percentage; and "how many people" counts people of any kind ("86 volunteers"),
not moths or nights. Run as chat runs it (MiniLM meaning and the offline NER's types)."""

from __future__ import annotations

import pytest

from tests.chat.reading import read_as_chat

BREWERY = (
    "Tamsin Ales, which is based in Kendal, brews the Copperhead stout.",
    "Tamsin Ales was set up in 2011 by two former teachers. "
    "In 2019 the brewery was taken over by Ridgeway Drinks, a group based in Shrewsbury.",
)
FESTIVAL = (
    "The Wexcombe folk festival ran from June 2015 until September 2018. "
    "Its organisers say a new festival will open in 2021.",
)
SURVEY = ("The Tarn moth survey logged 3,400 moths over 12 nights; 86 volunteers were enrolled.",)


@pytest.mark.parametrize(
    ("question", "answer", "texts"),
    [
        # the second link calls the brewery by its noun: the owner is read through it
        ("Which group owns the firm that brews Copperhead stout?", "Ridgeway Drinks", BREWERY),
        # where the buyer is based, not where the firm it bought is
        ("Where is the group that bought Tamsin Ales based?", "Shrewsbury", BREWERY),
        # each end of a range, and a later opening is not when this one ended
        ("When did the Wexcombe festival come to an end?", "September 2018", FESTIVAL),
        ("When did the Wexcombe festival begin?", "June 2015", FESTIVAL),
        # people of any kind: the volunteers, not the moths or the nights
        ("How many people took part in the Tarn moth survey?", "86", SURVEY),
    ],
)
def test_the_reader_reads_nouns_ends_and_counts(question, answer, texts):
    got = read_as_chat(question, *texts)
    assert got.answered and got.short == answer, got


def test_a_price_is_never_a_percentage():
    got = read_as_chat(
        "How much did a ticket to the Wexcombe festival cost?",
        "Tickets for the Wexcombe folk festival sold out within a week, and attendance rose 15% on the year before.",
    )
    assert not got.answered, got
    assert got.text.startswith("Your documents don't say"), got.text
