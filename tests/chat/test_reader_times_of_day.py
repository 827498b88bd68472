"""The extractive reader on times of day (issue 26), in words of our own: "when is it open" and "at what hours" are
answered with the hours the evidence gives, a range whole ("9am to 1pm"), the one beside the day the question
names; "any time" and a part of a month ("the first week of July") are answers too; a question asking for a year still takes the year, and a sum written
"2.50 pounds" is no time. Run as chat runs it (MiniLM and the offline NER)."""

from __future__ import annotations

import pytest

from tests.chat.reading import read_as_chat

CAFE = (
    "The repair café is staffed by volunteers. It opens on Tuesday evenings from 7pm to 9.30pm and on Saturdays from "
    "9am to 1pm.",
)
HELPLINE = ("Call the helpline on 0800 123 456, open 8am to 6pm on weekdays, or write to the address below.",)
FERRY = ("The ferry service started in 1987 and sails at 7:30 from Pier 2. Boarding starts at 6:45.",)
WARD = ("Parents may stay with their child at any time. Other visitors are welcome from 2pm to 6pm.",)


@pytest.mark.parametrize(
    ("question", "answer", "texts"),
    [
        ("When is the repair café open on Saturdays?", "9am to 1pm", CAFE),
        ("When can you drop in on a Tuesday?", "7pm to 9.30pm", CAFE),
        ("At what hours can the helpline be reached?", "8am to 6pm", HELPLINE),
        ("When does boarding begin?", "6:45", FERRY),
        ("In which year did the ferry service start?", "1987", FERRY),
        ("When can parents be with their child?", "any time", WARD),
    ],
)
def test_a_when_question_is_answered_with_the_hours_the_evidence_gives(question, answer, texts):
    got = read_as_chat(question, *texts, title="notes.txt")
    assert got.answered and got.short == answer, got


def test_a_sum_is_no_time_of_day():
    got = read_as_chat(
        "When is the car park open?",
        "Charges are 2.50 pounds for up to two hours. The car park is open from 6am until midnight.",
        title="notes.txt",
    )
    assert got.answered and got.short == "6am until midnight", got


@pytest.mark.parametrize(
    ("question", "answer", "text"),
    [
        ("When is the choir's tour?", "the first week of July", "The choir's tour is in the first week of July."),
        ("When will the hall reopen?", "the end of March", "The hall will reopen at the end of March, after repairs."),
    ],
)
def test_a_part_of_a_month_is_a_when(question, answer, text):
    got = read_as_chat(question, text, title="notes.txt")
    assert got.answered and got.short == answer, got
