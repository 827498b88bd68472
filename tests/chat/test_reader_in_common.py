"""The extractive reader on what two things have in common (issue 26), in words of our own: the answer is what the
passages of both say (a place both stand in), not a name one of them gives alone nor a chain from one of them; "what
country" takes the country a "town, region, country" place names last. Run as chat runs it (MiniLM and the offline
NER)."""

from __future__ import annotations

from tests.chat.reading import read_as_chat

MILL = "Brantley Mill is a watermill on the river Esk near the hamlet of Ruswarp in Yorkshire, England."
CHURCH = "Brantley Church stands above the village of Sleights in Yorkshire, England, two miles from the mill."
OTHER = "Ruswarp is a village with a railway station on the Esk Valley line, opened in 1847."


def test_what_both_passages_say_is_what_they_have_in_common():
    got = read_as_chat(
        "What country do Brantley Mill and Brantley Church have in common?", MILL, CHURCH, OTHER, title="esk.txt"
    )
    assert got.answered and got.short == "England", got


def test_a_country_asked_of_one_place_is_the_last_part_of_where_it_is():
    got = read_as_chat("In which country is Brantley Church?", CHURCH, title="esk.txt")
    assert got.answered and got.short == "England", got
