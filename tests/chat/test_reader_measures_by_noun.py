"""The extractive reader on a measure asked by its noun (issue 26), in words of our own: "What are the dimensions of
the rug?" and "What is the height of the viaduct?" are answered with the figure and its unit, as "how long" is, never
a bare number nor a name from the same notes. Run as chat runs it (MiniLM and the offline NER)."""

from __future__ import annotations

import pytest

from tests.chat.reading import read_as_chat

RUG = (
    "The Tabriz rug was bought at auction in 1988 and hangs in Room 4. It measures 3.6 metres by 2.4 metres and "
    "has 40 knots to the centimetre.",
)
VIADUCT = ("The Calder Viaduct was finished in 1871 and has 21 arches. It stands 38 metres above the river.",)


@pytest.mark.parametrize(
    ("question", "answer", "texts"),
    [
        ("What are the dimensions of the Tabriz rug?", "3.6 metres", RUG),
        ("What is the height of the Calder Viaduct?", "38 metres", VIADUCT),
    ],
)
def test_a_measure_asked_by_its_noun_comes_with_its_unit(question, answer, texts):
    got = read_as_chat(question, *texts, title="notes.txt")
    assert got.answered and got.short == answer, got
