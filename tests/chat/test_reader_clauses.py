"""The extractive reader's clauses and sides (issue 26, notes written for a newcomer's `make run`): a date or a name
belongs to its own clause's verb ("opened in 1902 and rebuilt in 1961": rebuilt in 1961); "built", "constructed"
and "erected" say one link, as "carried", "hauled" and "transported" do; a sale has two sides: for "who did
they buy it from" the answer is the one it was bought from, never the buyer; a flat question its best sentence
answers is not followed to another sentence (a real paper's "SunSpider consists of 26 programs" for "how many
programs does SunSpider contain" was answered "10" from a sentence about JavaScript); and a figure ("25x") is no name. Run as chat runs it (MiniLM meaning
and the offline NER's types); invented places and firms, questions in other words than the texts."""

from __future__ import annotations

import pytest

from tests.chat.reading import read_as_chat


def _answers(question: str, *texts: str, answer: str) -> None:
    got = read_as_chat(question, *texts)
    assert got.answered and got.short == answer, got


PIER = "Saltmarsh pier was opened in 1902 and rebuilt in 1961 after a storm took its head."
BARGES = "For a century the Aldwick narrowboats hauled limestone from the Cressing quarries to the kilns at Bury Lock."
BRIDGE = "The footbridge over the Wenning was erected by Carrow Civils, a contractor from Lancaster, in 2009."
BOATHOUSE = (
    "The Fenner Rowing Club owns the old boathouse on the quay. "
    "The club acquired it from Denholm Marine in 2003 for a token sum."
)


@pytest.mark.parametrize(
    ("question", "answer", "texts"),
    [
        # each date with its own verb: the second clause's year is when it was rebuilt
        ("When did Saltmarsh pier get rebuilt?", "1961", (PIER,)),
        ("When did Saltmarsh pier open?", "1902", (PIER,)),
        # "hauled" says what the boats transported
        ("What did the Aldwick narrowboats transport?", "limestone", (BARGES,)),
        # "erected by" says who built it
        ("Who built the footbridge over the Wenning?", "Carrow Civils", (BRIDGE,)),
        # the other side of a purchase: the seller, not the club that bought it and owns it now
        ("Who did the club buy the boathouse from?", "Denholm Marine", (BOATHOUSE,)),
    ],
)
def test_the_reader_reads_each_clause_and_each_side(question, answer, texts):
    _answers(question, *texts, answer=answer)


SONGBOOK = (
    "The Harwick songbook holds 48 carols collected by the Dales Folk Society.",
    "The Dales Folk Society meets in Skipton and sings each carol 3 times at its winter concert.",
)
TRACING = "Tracing reached its best speedup, 25x, on the bitops tests, where the Orca engine had been slowest."


@pytest.mark.parametrize(
    ("question", "answer", "texts"),
    [
        # the best sentence answers a flat question: another sentence about a name in it is no second link
        ("How many carols does the Harwick songbook contain?", "48", SONGBOOK),
        # a figure answers how much or how many, never which
        ("Which engine had been slowest on the bitops tests?", "Orca", (TRACING,)),
    ],
)
def test_a_flat_question_is_answered_by_its_best_sentence_and_never_by_a_figure_for_which(question, answer, texts):
    _answers(question, *texts, answer=answer)


QUILL = (
    "The Quill compiler is written in C++ and ships with a Python front end. On string code Quill is 12 times "
    "faster than the Lumen interpreter."
)


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Which language is the Quill compiler written in?", "C++"),  # a language's name with its signs, not "C"
        ("How much faster than Lumen is Quill on string code?", "12 times"),  # a ratio with its "times"
    ],
)
def test_technical_names_and_ratios_are_copied_whole(question, answer):
    _answers(question, QUILL, answer=answer)


def test_who_did_a_thing_the_documents_never_say_is_refused():
    # the passage never says painted, nor anything meaning it: not "Wexcombe" (the tearoom's own name), nor Bristol
    tearoom = (
        "The Wexcombe tearoom opened in 2011 in the old forge on Church Street. In 2019 it bought a coffee roaster "
        "from a closing Bristol café for 2,400 pounds."
    )
    got = read_as_chat("Who painted the tearoom's sign?", tearoom)
    assert not got.answered and got.short == ""
    assert got.text.startswith("Your documents don't say")


LEDGER = (
    "Harbourside Kilns — spring trading note\n\n"
    "Sales for the half-year climbed 9% to $2.7 million on orders for glazed tiles. Chief operating officer Mirela "
    "Danu said running costs came to $1.9 million. A second kiln shed, opening in Truro next year, will employ "
    "35 people; its construction will cost about 4 million euros."
)


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("By how much did sales go up?", "9%"),  # the change, with its sign
        ("What were sales in the half-year?", "$2.7 million"),  # the sum, with its currency, not the change
        ("What were the running costs?", "$1.9 million"),
        ("Who is the COO?", "Mirela Danu"),  # an acronym the note writes out
        # "will employ 35 people", not the cost; the building said beside it is no other relation than staffing
        ("How many staff will the new kiln shed have?", "35"),
    ],
)
def test_a_trading_note_is_read_in_its_own_terms(question, answer):
    _answers(question, LEDGER, answer=answer)


TRUST = (
    "The Hollin Trust was set up in 1990 by Ada Moss, a retired teacher, who still chairs it. "
    "In 2021 Priya Lal took over from Tom Fenn as the trust's warden."
)


def test_a_role_the_documents_never_name_is_refused_and_one_said_in_other_words_is_answered():
    # no treasurer anywhere: not the founder who chairs it
    refused = read_as_chat("Who is the Hollin Trust's treasurer?", TRUST)
    assert not refused.answered and refused.short == ""
    # "took over from" says who came before: a succession, not a purchase
    _answers("Who was Priya Lal's predecessor?", TRUST, answer="Tom Fenn")


def test_a_common_noun_place_with_a_name_in_it_answers_where():
    notes = (
        "The Ancrum Growers' Circle was started in 2004 by Nell Hume. "
        "The winter seed swap will be held in the Ancrum fishing hut on 3 December."
    )
    _answers("Where will the seed swap happen?", notes, answer="the Ancrum fishing hut")


def test_the_doer_named_after_its_role_noun_answers_who():
    # no name in the question: the one the sentence calls the supplier (the NER takes it for a place), not the
    # officer who spoke
    note = (
        "Harlen Pumps — spring trading update\n\n"
        "Sales rose 8% to $6.3 million, led by orders for the Osprey borehole pump.\n\n"
        "Chief operating officer Ruth Amis said overheads fell to $2.4 million after the switch to a single supplier "
        "for gearboxes, Tolland Gear of Bremen."
    )
    got = read_as_chat("Who supplies the gearboxes?", note)
    assert got.answered and got.short.startswith("Tolland Gear")
