"""The extractive reader over articles as users write them (issue 26): sentences that open with a pronoun are read
with what it stands for, a measure is answered with its unit, a thing the question already names is not its answer,
and a body asked for by what it is ("which charity") is found by the sentence that says so. The reader runs as chat
runs it: MiniLM meaning and the offline NER's types. Invented names; questions in other words than the text."""

from __future__ import annotations

import pytest

from exograph.core.llm.extractive_referents import pronoun_referents, resolved
from exograph.core.llm.extractive_text import _stem
from tests.chat.reading import read_as_chat

MILL = (
    "Valley gazette, autumn number\n\n"
    "The Corran Beacon stands on the east bank of the river Sallow. It was designed by the engineer Ewan Tarbet, "
    "who also planned the town's stone bridge in 1868. The miller's house now holds a small museum.\n\n"
    "The mill survey questioned 2,400 visitors across three seasons and ran for fourteen months. "
    "The survey was paid for by the Larkspur Trust, a charity set up by the brewer Nell Odogwu. "
    "The great bell above the gate weighs 2,100 kilograms."
)
CLUB = (
    "The Wexley Harriers reached the county final in 1971 under the coach Marta Silvan. "
    "She had joined the club as a sprinter and later trained it for fifteen years."
)


def _ask(question: str, *texts: str) -> str:
    return read_as_chat(question, *texts).short


def test_a_pronoun_stands_for_the_nearest_name_before_it_and_a_run_of_them_keeps_it():
    sentences = [
        "Ravi Menon is a singer from Kerala.",
        "He became known for the song Neela Vanam.",
        "He made his debut in the film Kadal Kaattu.",
        "He worked as an engineer at Indus Data Systems.",
    ]
    assert pronoun_referents(sentences, lead="Ravi Menon") == ["", "Ravi Menon", "Ravi Menon", "Ravi Menon"]
    # "it" is the earlier sentence's subject; "she" a name of two words or more
    assert (
        pronoun_referents(
            ["The Brennock Mill stands on the river Sallow.", "It was designed by Ewan Tarbet."], lead=""
        )[1]
        == "Brennock Mill"
    )
    assert pronoun_referents(CLUB.split(". "), lead="Wexley Harriers")[1] == "Marta Silvan"
    assert resolved("Its roof was replaced in 1990.", "Brennock Mill") == "Brennock Mill's roof was replaced in 1990."


def test_a_doubled_consonant_before_an_ending_is_one_stem():
    assert _stem("planned") == _stem("plans") == _stem("planning") == "plan"
    assert _stem("stopped") == "stop" and _stem("called") == "call"


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("How long did the mill survey last?", "fourteen months"),
        ("How heavy is the bell over the gate?", "2,100 kilograms"),
        ("Which charity funded the mill survey?", "Larkspur Trust"),
    ],
)
def test_questions_in_other_words_over_an_article(question, answer):  # type: ignore[no-untyped-def]
    assert _ask(question, MILL) == answer


def test_a_pronoun_sentence_answers_for_the_person_named_before_it():
    assert _ask("Who trained the Wexley Harriers for fifteen years?", CLUB) == "Marta Silvan"


def test_a_name_is_not_run_into_the_date_after_it():
    from exograph.core.llm.extractive_text import names_in

    text = "The Coastal Waters Act was signed by Governor Ruth Amadi on March 3, 2011, after a long debate."
    assert "Governor Ruth Amadi" in names_in(text)
    assert not any("March" in name and "Amadi" in name for name in names_in(text))


def test_a_question_the_best_sentence_answers_whole_is_not_followed_as_a_chain_from_a_worse_one():
    texts = (
        "The Harbour Act was signed into law by Governor Ruth Amadi on 3 March 2011.",
        "Most provisions of the Harbour Act rest on the Kestrel Convention.",
        "The Kestrel Convention became law in Norway under Premier Jonas Lind.",
    )
    assert "Ruth Amadi" in _ask("Who signed the Harbour Act into law?", *texts)
