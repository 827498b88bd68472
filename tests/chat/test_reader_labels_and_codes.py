"""The extractive reader on the labelled values and stray figures of everyday notes (issue 26), in words of our own:
a value written after the asked noun ("door code 4471B") or with its ordinal ("on the third level") answers "what
code" or "which level"; "what times must ..." asks for times; a pressure is a measure with its unit; and a phone
number or a house number is never a count. Run as chat runs it (MiniLM and the offline NER)."""

from __future__ import annotations

from tests.chat.reading import read_as_chat


def test_a_code_written_after_the_asked_noun_answers_it():
    got = read_as_chat(
        "What is the door code for the bike store?",
        "Bike store: door code 4471B, open from 7am to 10pm.",
        "Bike store manager: Priya Shah, who also runs the Thursday repair club.",
        title="notes.txt",
    )
    assert got.answered and got.short == "4471B", got


def test_the_asked_noun_with_its_ordinal_answers_which_one():
    got = read_as_chat(
        "On which level is the Quiet Reading Room?",
        "The Quiet Reading Room and the map library are on the third level; the café is by the entrance.",
        "The library was designed by Ellis Marr and opened by Mayor Jane Holt in 1998.",
        title="library.txt",
    )
    assert got.answered and got.short == "third level", got


def test_what_times_must_asks_for_times():
    got = read_as_chat(
        "At what times must readers leave the archive?",
        "Readers must leave the archive from 1pm to 2pm while the staff take lunch.",
        "The archive holds parish records from 1540 onwards.",
        title="archive.txt",
    )
    assert got.answered and got.short == "1pm to 2pm", got


def test_a_pressure_is_a_measure_with_its_unit():
    got = read_as_chat(
        "What pressure should the boiler run at?",
        "Keep the boiler at 1.5 bar when it is cold; the installer is Hallam Heating of Leeds.",
        "The boiler was fitted in 2019.",
        title="boiler.txt",
    )
    assert got.answered and got.short == "1.5 bar", got


def test_a_house_number_is_no_count():
    got = read_as_chat(
        "How many volunteers does the allotment society need?",
        "The Allotment Society, 14 Mill Road, Settle, welcomes volunteers on Sundays.",
        "Call the secretary for details.",
        title="allotments.txt",
    )
    assert not got.answered, got


def test_a_phone_number_is_no_count():
    got = read_as_chat(
        "How many places are left on the pottery course?",
        "To book a place on the pottery course, ring 01632 960 118 before Friday.",
        "The pottery course is taught by Mira Hale in the old school.",
        title="notes.txt",
    )
    assert not got.answered, got
