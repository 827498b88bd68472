"""The extractive reader on an answer made of the question's words (issue 26), in words of our own: a name of the
asked noun that the question never writes ("Harbour City College" for "the Harbour City Hawks ... which college")
answers it, although each of its words is one the question uses; the question's own name is still never its answer.
Run as chat runs it (MiniLM and the offline NER)."""

from __future__ import annotations

import pytest

from tests.chat.reading import read_as_chat

NOTES = (
    "The 2021 Harbour City Hawks rowing crew represented Harbour City College in the Northern Regatta League.",
    "Harbour City College is a private arts college in Portmere with about 3,000 students.",
)


@pytest.mark.parametrize(
    "question",
    [
        "The 2021 Harbour City Hawks crew rowed for which private college in Portmere?",
        "Which college did the Harbour City Hawks row for in 2021?",
    ],
)
def test_a_name_of_the_asked_noun_the_question_never_writes_answers_it(question):
    got = read_as_chat(question, *NOTES, title="hawks.txt")
    assert got.answered and got.short == "Harbour City College", got


def test_the_question_own_name_is_not_its_answer():
    got = read_as_chat("Which league did the Harbour City Hawks row in?", *NOTES, title="hawks.txt")
    assert got.answered and got.short == "Northern Regatta League", got
