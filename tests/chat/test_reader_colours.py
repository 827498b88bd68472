"""The extractive reader on colours (issue 26), in words of our own: "what colour" is answered by the colours the
evidence gives ("navy and gold", "black or pale blue"), never by a name beside them, and refused when the evidence
gives no colour. Run as chat runs it (MiniLM and the offline NER)."""

from __future__ import annotations

import pytest

from tests.chat.reading import read_as_chat

CLUB = (
    "The Wexley Harriers are an athletics club founded in 1921 in Wexley, Kent.",
    "Its runners compete in navy and gold hooped vests designed by Carla Mendes.",
)
LAMP = (
    "The Vela is a brass desk lamp made by Orrin Lighting in Leeds.",
    "Its cable is 1.8 metres long and the shade tilts through 90 degrees.",
)


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("What colours do the Wexley Harriers race in?", "navy and gold"),
        ("Which colour are the Harriers' vests?", "navy and gold"),
    ],
)
def test_a_colour_question_is_answered_by_the_colours_given(question, answer):
    got = read_as_chat(question, *CLUB, title="wexley-harriers.txt")
    assert got.answered and got.short.casefold() == answer, got


def test_a_colour_the_evidence_never_gives_is_refused():
    got = read_as_chat("What colour is the Vela lamp?", *LAMP, title="vela.txt")
    assert not got.answered and not got.short, got
