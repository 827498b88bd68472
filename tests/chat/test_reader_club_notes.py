"""A club's and a shop's notes read as a newcomer asks about them (from the newcomer audit): a room with the
building it is in, a frequency over several days, a proprietor as an owner, and a donation that says no closing."""

from __future__ import annotations

from tests.chat.reading import read_as_chat

NOTES = (
    "The Tern Valley Harriers' committee meets on the last Friday of each month in the function room of the Red Lion. "
    "The milk van calls every Monday and Thursday before 7 a.m.",
    "Pell's Hardware is a family shop in Bewdley, owned by Ada Mwangi since 2016.",
    "The Bewdley Museum's rocking horse was donated by the Ashworth family in 1998.",
)


def test_a_room_is_answered_with_the_building_it_is_in() -> None:
    read = read_as_chat("Where does the Harriers' committee gather?", *NOTES)
    assert read.answered and read.short == "the function room of the Red Lion", read.text


def test_how_often_takes_every_day_listed() -> None:
    read = read_as_chat("How often does the milk van come?", *NOTES)
    assert read.answered and read.short.casefold() == "every monday and thursday", read.text


def test_a_proprietor_is_an_owner() -> None:
    read = read_as_chat("Who is the proprietor of the hardware shop?", *NOTES)
    assert read.answered and read.short == "Ada Mwangi", read.text


def test_a_donation_year_is_not_when_a_museum_closes() -> None:
    read = read_as_chat("Which day of the week is the Bewdley Museum closed?", *NOTES)
    assert not read.answered, read.text
