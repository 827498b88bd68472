"""Opening hours and who chairs what, as a newcomer asks about a small museum and a community garden (from the
newcomer audit on make run)."""

from __future__ import annotations

from tests.chat.reading import read_as_chat

NOTES = (
    "The Wenlock Mill Museum opened in 1958 in the old granary. It is open from May to September, on Wednesdays, "
    "Sundays and bank holiday Mondays, from ten until four.",
    "The Ludlow Community Orchard is run by a committee of five. Helen Price chairs the committee.",
)


def test_when_a_place_is_open_is_its_days_not_the_year_it_opened() -> None:
    read = read_as_chat("When is the Wenlock Mill Museum open?", *NOTES)
    assert read.answered and read.short == "Wednesdays, Sundays and bank holiday Mondays", read.text


def test_what_is_run_by_someone_is_not_who_runs_it() -> None:
    read = read_as_chat("Who chairs the Ludlow orchard committee?", *NOTES)
    assert read.answered and read.short == "Helen Price", read.text  # not the orchard, which "is run by" the committee
