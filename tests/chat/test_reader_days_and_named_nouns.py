"""Answers the newcomer audit found missing: a recurring day of the week for "when does it meet", the name whose
own noun is the one asked for ("which party": the Green Party), and a membership said as "belongs to"."""

from __future__ import annotations

from tests.chat.reading import read_as_chat

TOWN = (
    "Kelby's mayor is Delia Fenn, who was elected in 2022. Fenn is a member of the Green Party.",
    "The parish council sits on the second Wednesday of each month at the Old Forge. The repair café runs from "
    "10am to 1pm on Saturdays and is shut on Mondays.",
)


def test_when_a_body_meets_is_answered_by_its_day_of_the_week() -> None:
    read = read_as_chat("When does the parish council get together?", *TOWN)
    assert read.answered and read.short == "the second Wednesday of each month", read.text


def test_a_question_naming_a_day_is_answered_by_the_hours_not_another_day() -> None:
    read = read_as_chat("When is the repair café open on Saturdays?", *TOWN)
    assert read.answered and read.short == "10am to 1pm", read.text


def test_the_name_holding_the_asked_noun_answers_which_noun() -> None:
    read = read_as_chat("Which party does the mayor belong to?", *TOWN)
    assert read.answered and read.short == "Green Party", read.text


def test_belonging_to_an_owner_is_ownership() -> None:
    texts = ("The Calder Observatory stands on Ben Ruthar. The observatory belongs to the University of Fennick.",)
    read = read_as_chat("Which university owns the observatory on Ben Ruthar?", *texts)
    assert read.answered and read.short == "University of Fennick", read.text


def test_how_far_is_answered_by_a_distance_not_a_price() -> None:
    texts = (
        "The honey is jarred at Moss End, three kilometres away, and sold at the village shop for 6 pounds a jar.",
    )
    read = read_as_chat("How far away is Moss End?", *texts)
    assert read.answered and read.short == "three kilometres", read.text


def test_a_month_that_recurs_each_year_answers_which_month() -> None:
    texts = ("The cider is pressed each November in the old barn at Pollard's Yard.",)
    read = read_as_chat("In which month is the cider pressed?", *texts)
    assert read.answered and read.short == "November", read.text
