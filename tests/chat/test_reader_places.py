"""The extractive reader's places and the thing asked about (issue 26, a newcomer's notes on `make run`): a name
written before the question's own noun ("the Dunmore fountain" for "the fountain") is what the question asks about,
not its answer; a person is never the answer to "where"; of "at X, in Y" the nearer place X is where; a place named
by a common noun ("in the village hall") answers "where" when no named place does; and "will"/"going" ask, they
name nothing. Run as chat runs it (MiniLM meaning and the offline NER's types); invented places and people,
questions in other words than the texts. Numbers are copied as written: no comma after one ("23,"), a hyphenated
measure whole ("twelve-metre"), and a year never counts people."""

from __future__ import annotations

import pytest

from exograph.core.llm.extractive_text import _stems
from tests.chat.reading import read_as_chat

FOUNTAIN = "The Dunmore fountain was unveiled in 1902 on the market square. The sculptor was Edwina Colquhoun."
ROOF = "The slate on the chapel roof was cut at Toberonochy, in Lorn, and brought down the loch by barge."
SUPPER = "Agnes Moray is cooking the harvest supper for the Wexcombe Singers, served in the village hall this year."
FERRY = "Captain Iain Rennie brings the ferry back every evening and ties it up at the north pier."


@pytest.mark.parametrize(
    ("question", "answer", "texts"),
    [
        # the name before the question's noun is the fountain itself, not who made it
        ("Who sculpted the fountain?", "Edwina Colquhoun", (FOUNTAIN,)),
        # of "at Toberonochy, in Lorn" the nearer place is where; Lorn only says where Toberonochy is
        ("Where did the chapel's slate come from?", "Toberonochy", (ROOF,)),
        # no named place: the common-noun place the sentence gives, not the choir it names
        ("Where will the harvest supper be served?", "the village hall", (SUPPER,)),
        # a person is never where, though the sentence names one
        ("Where does the ferry dock overnight?", "the north pier", (FERRY,)),
    ],
)
def test_the_reader_answers_with_the_asked_thing_and_place(question, answer, texts):
    got = read_as_chat(question, *texts)
    assert got.answered
    assert got.short == answer


def test_modal_and_future_words_are_not_what_a_question_names():
    assert _stems("Who will lead the walk?") == _stems("Who leads the walk?")
    assert "going" not in " ".join(_stems("Who is going to mend the gate?"))


WORKSHOP = (
    "Corran Joinery was started in 2009 in an old net loft by the harbour. "
    "Its payroll reached 23, most of them apprentices, in the spring. Last year it restored a twelve-metre "
    "lifeboat for the harbour trust."
)


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("How many staff does Corran Joinery employ?", "23"),  # not the year of the sentence naming the firm, nor "23,"
        ("How long was the lifeboat it restored?", "twelve-metre"),  # a hyphenated measure, as written
    ],
)
def test_counts_measures_and_years_are_copied_as_written(question, answer):
    assert read_as_chat(question, WORKSHOP).short == answer


def test_a_year_is_never_a_count():
    firm = (
        "Brindle Analytics was set up in 2014 by Kofi Mensah and Laura Pike in a converted warehouse in Salford. "
        "The firm now employs 85 people."
    )
    assert read_as_chat("How many staff does Brindle have?", firm).short == "85"


def test_a_place_a_compass_direction_locates_is_no_owner():
    light = (
        "Kestrel Point lighthouse\n\n"
        "Kestrel Point lighthouse stands on a granite headland south of Porthallow. It was designed by the engineer "
        "James Walker and first lit in 1842. The tower is 28 metres tall. Since 2015 the lighthouse has been owned by "
        "the Penrose Heritage Trust, which bought it from Trinity House."
    )
    assert read_as_chat("Who owns Kestrel Point lighthouse?", light).short != "Porthallow"


BAKERY = (
    "In May 2024 the Saltmarsh bakery bought a second-hand deck oven from a retired baker, Ines Varga, for 3,800 "
    "euros. The oven was delivered to the bakery three weeks later. The spring market will be held on 4 April at "
    "the old bus terminal."
)


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        # what was paid is said by the purchase ("bought ... for"), in a currency, not "three weeks"
        ("How much did the bakery pay for its oven?", "3,800 euros"),
        ("How much did the Saltmarsh bakery pay for the deck oven?", "3,800 euros"),
        ("Where is the spring market taking place?", "the old bus terminal"),
    ],
)
def test_money_is_answered_in_a_currency_and_a_terminal_is_a_place(question, answer):
    assert read_as_chat(question, BAKERY).short == answer
