"""The extractive reader on a fourth round of notes (a job advert, a walking holiday, an obituary, a planning
decision, a software FAQ; issue 26), re-told here in other words and other places: "which <noun> <verb>s the
<thing>" asks for the doer of that verb, whatever the thing is ("Which firm drives the lorries?": the firm the
lorries are "driven by"); a name the sentence calls the asked noun in an apposition ("X, the oldest working museum
in Essex") is of the asked kind whatever the NER says, and the place written after that noun ("in Essex") is
where it is, not it; a code of letters and digits ("F3-F4") names no county; "how many cottages ... at low rent"
counts cottages, whatever sum follows; "what time" takes a time of day, never "812" of "812 metres". Run as chat
runs it (MiniLM and the offline NER)."""

from __future__ import annotations

import pytest

from tests.chat.reading import read_as_chat

HAULAGE = ("All orders leave from Rotterdam in lorries driven by Vandam Haulage, and they are insured in Antwerp.",)
GARDENS = ("The gardens, in Hexham, are looked after by the Green Spaces Trust, which bought them from the council.",)
TRIP = ("After lunch the class tours Harlow Works, the oldest working museum in Essex, and returns by coach.",)
STORM = ("No severe (F3-F4) storm has reached the valley since 1952. The valley is a quiet place with two farms.",)


@pytest.mark.parametrize(
    ("question", "answer", "texts"),
    [
        # the doer of the question's verb, done to a common noun: not the port the lorries leave from
        ("Which firm drives the lorries?", "Vandam Haulage", HAULAGE),
        # with the verb's particle ("looks after"): not the town the gardens are in
        ("Which charity looks after the gardens?", "Green Spaces Trust", GARDENS),
        # the name the sentence calls a museum, not the county the museum is in
        ("Which museum will the class tour?", "Harlow Works", TRIP),
    ],
)
def test_the_reader_reads_a_fourth_round_of_notes_in_other_words(question, answer, texts):
    got = read_as_chat(question, *texts, title="notes.txt")
    assert got.answered and got.short == answer, got


def test_a_code_of_letters_and_digits_names_no_county():
    got = read_as_chat("What county did the storm reach?", *STORM, title="notes.txt")
    assert "F3" not in got.short and "F4" not in got.short, got


def test_how_many_counts_the_things_it_names_whatever_sum_follows():
    # "how many cottages ... at low rent": a count of cottages; "rent" is a sum, but the question counts cottages
    texts = ("Terms agreed: six of the cottages must be let at low rents; building work may happen only between 9 am "
             "and 5 pm.",)  # fmt: skip
    got = read_as_chat("How many cottages will be let at low rent?", *texts, title="notes.txt")
    assert got.answered and got.short == "six", got


def test_what_time_takes_a_time_of_day_never_a_height():
    texts = (
        "Day 1 (Saturday).\n\nMeet your guide, Ewan Ross, at the harbour at 9:30.\n\nDay 3 (Monday).\n\nThe longest "
        "day: the climb up Ben Arrin, 812 metres, with views over the whole bay.",
    )
    got = read_as_chat("At what time do we gather on day one?", *texts, title="notes.txt")
    assert got.answered and got.short == "9:30", got


def test_a_councillors_title_is_not_part_of_the_name():
    texts = ("Councillor Amir Shah, who chairs the parish board, said the new hall would open in spring.",)
    got = read_as_chat("Who heads the parish board?", *texts, title="notes.txt")
    assert got.answered and got.short == "Amir Shah", got


def test_days_of_the_week_are_when_never_where():
    texts = ("Volunteers staff the shop on Mondays and Fridays and work from home the rest of the week.",)
    got = read_as_chat("Where do the volunteers work for the rest of the week?", *texts, title="notes.txt")
    assert "Monday" not in got.short and "Friday" not in got.short, got
