"""Where something comes from, when the NER swaps a person and a place (from the newcomer audit's bakery notes): a
name after "comes from" may answer where, and the doer of a passive ("run by X") never does."""

from __future__ import annotations

from tests.chat.reading import read_as_chat

NOTES = (
    "Harrow Lane Bakery is a family bakery in Ludlow, owned by Priya Castellano since 2019. All wheat and rye flour "
    "comes from Tolbridge Mill, a stone-ground mill near Hereford.",
    "Textiles are cleaned by a studio in Ludlow run by Ifeoma Adeyemi.",
)


def test_where_the_flour_comes_from_is_the_mill() -> None:
    read = read_as_chat("Where does the bakery get its flour?", *NOTES)
    assert read.answered and read.short == "Tolbridge Mill", read.text  # not the studio's owner, nor the town
