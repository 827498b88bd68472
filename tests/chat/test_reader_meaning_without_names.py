"""The extractive reader on near-topic questions (issue 26), in words of our own: a sentence that does not say the
asked action ("Who bound the atlas?", "What is the atlas insured for?") is not let through by a meaning that is only
the names it shares with the question; with those names taken out it must still mean the question. A what-question
closing on a passive verb ("valued at") asks about that action. Answers said in other words still come through.
Run as chat runs it (MiniLM and the offline NER)."""

from __future__ import annotations

import pytest

from tests.chat.reading import read_as_chat

ATLAS = (
    "The Larkspur Atlas, a folio of hand-coloured maps printed in about 1790, was given to the museum in 1958 by the "
    "Pennick family.",
)
STUDIO = ("Report prepared by the conservation studio of the Ashby Bookbinding Museum, Ludlow, 3 May 2026.", *ATLAS)
KEPT = (*ATLAS, "It has been kept in the rare books room ever since.")


@pytest.mark.parametrize(
    ("question", "texts"),
    [
        ("Who bound the Larkspur Atlas?", STUDIO),
        ("What is the Larkspur Atlas insured for?", KEPT),
        ("What is the Larkspur Atlas valued at?", ATLAS),
    ],
)
def test_a_sentence_meaning_the_question_only_by_its_names_does_not_answer_it(question, texts):
    got = read_as_chat(question, *texts, title="notes.txt")
    assert not got.answered, got


@pytest.mark.parametrize(
    ("question", "answer", "texts"),
    [
        ("Who handed the Larkspur Atlas over to the museum?", "Pennick", ATLAS),
        ("Who put the winter show together?", "Nadia Brook", ("The winter show was curated by Nadia Brook.",)),
        ("When was the Larkspur Atlas printed?", "1790", ATLAS),
    ],
)
def test_an_answer_said_in_other_words_still_comes_through(question, answer, texts):
    got = read_as_chat(question, *texts, title="notes.txt")
    assert got.answered and answer in got.short, got
