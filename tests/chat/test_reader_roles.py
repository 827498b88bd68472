"""The extractive reader and who did what (issue 26): an irregular past form is its verb ("won" for "win"), the
doer of a passive verb of the question's family is its answer ("drafted by the surveyor X" for "who designed"), a
sentence where the question's object does the verb itself is not its answer ("Kestrel Freight runs lorries between
A and B" for "who runs Kestrel Freight"), and "what did X win?" is answered by what the evidence says was won. The
reader runs as chat runs it: MiniLM meaning and the offline NER's types. Invented names; questions in other words
than the text."""

from __future__ import annotations

import pytest

from exograph.core.llm.extractive_asked import asked_object, asked_verb
from exograph.core.llm.extractive_text import _stem, family_words
from tests.chat.reading import read_as_chat

FREIGHT = (
    "Kestrel Freight yearly review\n\n"
    "Kestrel Freight runs lorries between Abbotsley and the harbour town of Marrow Quay. Its depot employs 140 "
    "drivers.\n\n"
    "The firm's new lorries were assembled by Seddon Forge, a works in Pellow owned by the Brask Group. "
    "Kestrel Freight's chief executive is Odile Baptiste, who replaced Conrad Lusk in 2021."
)
VIADUCT = (
    "The Orrin viaduct crosses the Demby gorge near Castle Weir. It was drafted by the surveyor Piet Hallam, "
    "who also laid out the station yard."
)
CHOIR = (
    "Isla Ferrant conducts the Tollan Choir. She trained in Vienna before settling in Tollan. "
    "Her arrangement of an old sea song won the regional festival's silver cup twice."
)


def _ask(question: str, *texts: str) -> str:
    return read_as_chat(question, *texts).short


def test_an_irregular_past_form_is_read_as_its_verb():
    assert _stem("won") == _stem("win")
    assert _stem("built") == _stem("builds") == _stem("building")
    assert _stem("wrote") == _stem("written") == _stem("write")
    assert _stem("founded") != _stem("find")  # "found" is a verb of its own


def test_the_verb_closing_a_what_question_is_what_it_asks_the_object_of():
    assert asked_object("What did Ferrant's arrangement win?") == "win"
    assert asked_object("What does the Brask Group sell?") == "sell"
    assert asked_object("What did the council do?") == ""


def test_a_who_question_names_its_verb_and_what_the_verb_is_done_to():
    assert asked_verb("Who runs Kestrel Freight?") == ("runs", ["Kestrel Freight"])
    assert asked_verb("Which group owns Seddon Forge?") == ("owns", ["Seddon Forge"])
    assert asked_verb("Who was Odile Baptiste's predecessor?") is None


@pytest.mark.parametrize(
    ("question", "answer", "texts"),
    [
        # the question's object does the verb itself in the best-matching sentence: not who does it to the object
        ("Who runs Kestrel Freight?", "Odile Baptiste", (FREIGHT,)),
        # "assembled by" is the doer of "manufactured", though another sentence shares more of the question's words
        ("Who manufactured Kestrel Freight's new lorries?", "Seddon Forge", (FREIGHT,)),
        # "drafted by the surveyor X": a person after an occupation, the doer of a verb of the design family
        ("Who designed the viaduct over the Demby gorge?", "Piet Hallam", (VIADUCT,)),
        # "won" answers "win"; the lower-case prize is what the evidence says was won
        ("What did Ferrant's arrangement win?", "silver cup", (CHOIR,)),
    ],
)
def test_the_reader_answers_with_who_did_what_the_question_asks(question, answer, texts):
    assert answer in _ask(question, *texts)


FAMILY = (
    "Mirela Osei grew up in Kumasi and teaches chemistry there. Her cousin, Daniel Osei, became a carpenter and "
    "settled in Accra. Before opening his bakery, Tomas Greer worked as a lorry driver for nine years."
)
OTTERS = "The Fenwick Otters were formed in 1902 and play at Brae Park. Their colours are navy and gold."
SURVEY = (
    "The Brisk survey questioned farmers over seventy in two valleys. It ran for nine weeks and was paid for by "
    "the Upland Trust."
)


@pytest.mark.parametrize(
    ("question", "answer", "texts"),
    [
        # an occupation is a lower-case noun phrase: "became a carpenter", "worked as a lorry driver"
        ("What does Daniel Osei do for a living?", "carpenter", (FAMILY,)),
        ("What was Tomas Greer's job before the bakery?", "lorry driver", (FAMILY,)),
        # what the asked noun is said to be: "Their colours are navy and gold"
        ("What colours do the Fenwick Otters play in?", "navy and gold", (OTTERS,)),
        # "how long" wants a measure with its unit, not a bare number of another sentence ("over seventy")
        ("How long did the Brisk survey last?", "nine weeks", (SURVEY,)),
    ],
)
def test_the_reader_answers_an_occupation_a_said_noun_and_a_measure(question, answer, texts):
    assert _ask(question, *texts) == answer


@pytest.mark.parametrize(
    "question",
    [
        # the evidence names the thing asked about but never says the asked link of it
        "When was Seddon Forge founded?",
        "When was the Orrin viaduct pulled down?",
    ],
)
def test_a_question_on_a_named_thing_whose_link_the_evidence_never_says_is_refused(question):
    result = read_as_chat(question, FREIGHT, VIADUCT)
    assert not result.answered and result.short == "", result
    assert result.text.startswith("Your documents don't say"), result.text


DEPOT = (
    "Marrow Quay depot history\n\n"
    "Conrad Lusk joined Kestrel Freight in 1988 and ran the Marrow Quay depot for twenty years. In 2009 the depot "
    "was sold to Harrow Logistics. "
    "The choir's conductor, Isla Ferrant, was born in Dunmore in 1979."
)


@pytest.mark.parametrize(
    "question",
    [
        # the only sentence of the asked link is about someone another passage names
        "Where was Odile Baptiste born?",
        # the sentences naming him say other links of his (joined, ran, replaced as chief), never his death
        "When did Conrad Lusk die?",
    ],
)
def test_a_sentence_about_someone_else_or_another_link_of_the_asked_one_is_refused(question):
    result = read_as_chat(question, FREIGHT, CHOIR, DEPOT)
    assert not result.answered and result.short == "", result


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        # the passage names the depot; its sentence says two links of Conrad Lusk's, one of them the asked one
        ("Who was in charge of the depot at Marrow Quay?", "Conrad Lusk"),
        # sold to X says who bought it: a relation and its converse are one link
        ("Which company purchased the Marrow Quay depot?", "Harrow Logistics"),
        ("Which town was Isla Ferrant born in?", "Dunmore"),
    ],
)
def test_a_question_the_evidence_answers_in_other_words_is_still_answered(question, answer):
    result = read_as_chat(question, FREIGHT, VIADUCT, DEPOT)
    assert result.answered and answer in result.short, result


RESERVOIR = (
    "Notes on the Hollin reservoir\n\n"
    "The survey work was carried out by Fennick Partners, and the dam was raised by Corlow Civil in 2019. "
    "The new reservoir can hold 4.2 million cubic metres of water. Under the county's plan the visitor kiosk is "
    "staffed by a village charity, Moorside Friends, which also keeps the footpaths. Its engineer, Alun Pryde, "
    "trained at the Delft Institute after growing up in Hull."
)


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Which firm did the surveying for the Hollin reservoir?", "Fennick Partners"),  # "carried out by"
        ("Who staffs the reservoir's visitor kiosk?", "Moorside Friends"),  # the doer after its description
        ("How much water does the Hollin reservoir store?", "4.2 million cubic metres"),
    ],
)
def test_the_doer_and_a_measure_written_in_longer_phrases(question, answer):
    assert _ask(question, RESERVOIR) == answer


SINFONIA = (
    "Ketter Valley Sinfonia\n\n"
    "The Ketter Valley Sinfonia gives twelve concerts a season in the Assembly Rooms at Dunmore. Its principal "
    "conductor is Yusuf Erdem, a former oboist who studied in Ankara."
)


def test_the_answer_is_sought_near_what_the_question_asks_not_near_the_name_it_asks_about():
    # "Assembly Rooms" stands next to the orchestra's name; the conductor next to what "leads" asks for
    result = read_as_chat("Who leads the Ketter Valley Sinfonia?", SINFONIA)
    assert result.answered and result.short == "Yusuf Erdem", result


PARISH = (
    "Harlow parish notes\n\n"
    "Harlow had 8,400 inhabitants at the 2011 census. The parish church was rebuilt in 1862 after a fire."
)


def test_a_figure_the_question_asks_about_must_be_in_the_answers_passage():
    # the census year the evidence gives is not the year asked about
    assert not read_as_chat("What was the population of Harlow in 2020?", PARISH).answered
    result = read_as_chat("How many people lived in Harlow in 2011?", PARISH)
    assert result.answered and result.short == "8,400", result


WORKS = (
    "Garrow Instruments was set up in 1962 by the brothers Emil and Otto Garrow in a former tannery. "
    "Its first barometers were made by Pennock Foundry in 1963."
)


@pytest.mark.parametrize(
    "question",
    [
        # "set up" says who founded it, another link than who leads it now
        "Who is the managing director of Garrow Instruments?",
        # the foundry is named only as maker of barometers: nothing says when it shut
        "When did Pennock Foundry close?",
    ],
)
def test_a_link_said_by_a_phrasal_verb_is_another_link_than_the_asked_one(question):
    result = read_as_chat(question, WORKS)
    assert not result.answered and result.short == "", result


def test_a_phrasal_verb_still_answers_its_own_link_and_close_to_is_no_closure():
    assert "Otto Garrow" in read_as_chat("Who started Garrow Instruments?", WORKS).short
    assert family_words("Which mill close to the river shut in 1990?") == family_words("Which mill shut in 1990?")


ORGAN = (
    "Edmund Carrow (1874–1939) was a Scottish organ builder. He married Jean Laidlaw in 1902 and "
    "moved his workshop to Perth."
)


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("In what year did Edmund Carrow pass away?", "1939"),  # the span's end, not the year he married
        ("When was Edmund Carrow born?", "1874"),  # its start
    ],
)
def test_a_lifes_span_answers_birth_and_death(question, answer):
    assert read_as_chat(question, ORGAN).short == answer


def test_a_year_of_a_lifes_span_is_no_age():
    assert read_as_chat("How old was Edmund Carrow when he died?", ORGAN).short not in {"1874", "1939"}


def test_where_a_firm_was_set_up_says_where_it_was_based():
    # "set up" says founded (above); where it was founded still answers where it was based
    text = "Garrow Instruments was set up in 1962 by the brothers Emil and Otto Garrow in a former tannery in Dundee."
    assert read_as_chat("Where was Garrow Instruments based at first?", text).short == "Dundee"
