"""The extractive reader's refusal reads as English (issue 26): a question with do-support is quoted whole ("Your
documents don't say the answer to “What does the paper propose?”"), never "don't say what does the paper propose";
a question without it is said indirectly ("don't say who founded the bakery")."""

from __future__ import annotations

import pytest

from tests.chat.reading import read_as_chat

NOTE = "The Fellside hostel was opened by the Youth Hostels Association in 1932."


@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("What does the Marlow report propose?", "don't say the answer to “What does the Marlow report propose?”"),
        ("How many staff does Ostara have?", "don't say the answer to “How many staff does Ostara have?”"),
        ("Who founded the bakery?", "don't say who founded the bakery."),
    ],
)
def test_a_refusal_names_the_question_in_words_that_read(question, said):
    got = read_as_chat(question, NOTE, title="notes.txt")
    assert not got.answered and said in got.text, got.text
