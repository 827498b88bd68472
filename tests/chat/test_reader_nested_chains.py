"""Nested questions the reader follows to the far end (reported from the newcomer audit): the outer part of the
question asks what the second link must say ("Who established the firm that owns ..."), a possessive pronoun names
the bridge ("Its managing director is ..."), and a demonym names its country ("Portuguese" for Portugal)."""

from __future__ import annotations

from tests.chat.reading import read_as_chat

BAKERY = (
    "Crumb and Company operates fourteen bakeries in Leeds and Bradford. Crumb and Company is a subsidiary of "
    "Marlow Foods.",
    "Marlow Foods was established by Petra Holm in 2001. Its managing director is Oskar Lind. Marlow Foods also "
    "mills flour near York.",
)


def test_the_outer_part_of_a_nested_question_asks_what_the_second_link_says() -> None:
    # "operates" answers the inner part's "bakery chain", not who established the owner
    read = read_as_chat("Who established the firm that owns the bakery chain?", *BAKERY)
    assert read.answered and read.short == "Petra Holm", read.text
    assert read.chain == [2, 1]


def test_a_second_link_naming_the_bridge_by_its_pronoun_answers_the_role_asked() -> None:
    read = read_as_chat("Who is the managing director of the company that owns Crumb and Company?", *BAKERY)
    assert read.answered and read.short == "Oskar Lind", read.text  # not its founder
    assert read.chain == [2, 1]


def test_a_demonym_in_the_question_is_named_by_its_country_in_the_evidence() -> None:
    texts = (
        "The tallest bridge in Portugal is the Ponte Alta viaduct, 190 metres above the river. It was designed by "
        "Rui Matos.",
        "The oldest bridge in Porto was built by Roman engineers.",
    )
    read = read_as_chat("Who was the architect of the tallest Portuguese bridge?", *texts)
    assert read.answered and read.short == "Rui Matos", read.text
    # a demonym whose country the evidence never names still leaves the question uncovered
    off = read_as_chat("Who was the architect of the tallest Hungarian bridge?", *texts)
    assert not off.answered, off.text
