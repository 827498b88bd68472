"""A question that asks two things of one clause (issue 26, a newcomer's "What did the group decide to purchase, and
from whom?"): the offline reader answers both parts, each cited, the second read only in the sentences that
answered the first (another sentence speaks of another event); a second part they don't hold is said plainly; a
day with no year ("on 3 May") is a date. Run as chat runs it (MiniLM meaning and the offline NER's types);
invented names, questions in other words than the text."""

from __future__ import annotations

import pytest

from exograph.core.llm.extractive_parts import two_parts
from tests.chat.reading import read_as_chat

CLUB = (
    "The Linwood rowing club voted last night to order a new racing eight from Harrower Boats. "
    "Priya Shanmugam will coach the novice crews at the boathouse on 3 May. The club's president is Owen Tarrant."
)


@pytest.mark.parametrize(
    ("question", "short"),
    [
        ("What did the rowing club decide to order, and from whom?", "new racing eight, from Harrower Boats"),
        ("Who is going to coach the beginners, and when?", "Priya Shanmugam, on 3 May"),
        ("Who will train the novice crews, and where?", "Priya Shanmugam, at the boathouse"),
    ],
)
def test_both_parts_are_answered_and_cited(question, short):
    got = read_as_chat(question, CLUB)
    assert got.answered
    assert got.short == short
    first, second = short.split(", ")
    assert got.text.startswith(f"{first[:1].upper()}{first[1:]} [1], {second} [1].")


def test_a_second_part_the_documents_do_not_hold_is_said_plainly():
    got = read_as_chat("Who is the club's president, and when was he elected?", CLUB)
    assert got.answered and got.short == "Owen Tarrant"
    assert got.text.endswith("Your documents don't say when was he elected.")
    # the date the evidence gives belongs to another sentence's event (the coaching), not to the order
    got = read_as_chat("What did the rowing club decide to order, and when?", CLUB)
    assert got.short == "new racing eight"
    assert got.text.endswith("Your documents don't say when.")


def test_a_question_of_one_part_is_not_split():
    assert two_parts("Who wrote the club's rules and who signed them in 1990") is None  # no comma, no closing wh
    assert two_parts("Which boat and which crew won?") is None
    assert two_parts("Who coached the crews, and when did they race?") == (
        "Who coached the crews?",
        "When did they race?",
    )
    assert two_parts("Who sold the boat, and to whom?") == ("Who sold the boat?", "Who sold the boat to?")
    assert two_parts("Who runs the ferry now, and since when?") == (
        "Who runs the ferry now?",
        "When runs the ferry now?",
    )
