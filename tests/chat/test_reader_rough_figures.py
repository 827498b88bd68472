"""The extractive reader on a rough figure asked roughly (issue 26), in words of our own: "Roughly what year was the
Orrin Chalice made?" over a report giving "made in about 1610" beside the dates it was shown, given and reported is
answered with the figure the evidence gives as rough; "How long is the walk in winter?" with the figure
written "in winter". Run as chat runs it (MiniLM and the offline NER)."""

from __future__ import annotations

from tests.chat.reading import read_as_chat

REPORT = (
    "Condition report: the Orrin Chalice\n\nPrepared by the collections team of the Ashby Museum, York, 3 May 2026.\n\n"
    "The Orrin Chalice, a silver cup made in about 1610, was taken off display in February 2026 after staff noticed a "
    "crack in its stem. It was given to the museum in 1951 by the Orrin family, who had kept it at Ferne House."
)


def test_a_rough_question_takes_the_figure_given_as_rough():
    got = read_as_chat("Roughly what year was the Orrin Chalice made?", REPORT, title="report.txt")
    assert got.answered and got.short == "1610", got


def test_an_exact_question_still_reads_the_asked_event():
    got = read_as_chat("In what year was the Orrin Chalice given to the museum?", REPORT, title="report.txt")
    assert got.answered and got.short == "1951", got


def test_a_figure_written_with_the_questions_qualifier_answers_it():
    text = "A ticket costs 4 pounds on weekdays and 6 pounds on Sundays."
    assert read_as_chat("How much is a ticket on Sundays?", text, title="fares.txt").short == "6 pounds"
    walk = "The walk to the falls takes about three hours in summer and five hours in winter, when the path is icy."
    assert read_as_chat("How long is the walk in winter?", walk, title="walks.txt").short == "five hours"
