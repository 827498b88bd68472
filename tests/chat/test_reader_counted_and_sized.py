"""The extractive reader on counts and sizes (issue 26), in words of our own: a sentence that counts the asked noun
("recorded in 24 currencies") answers "how many currencies" itself, never a chain through another sentence's
figure ("for 60 days"); and "how big is the yearly grant" takes the sum written before "grant", not the stipend
beside it. Run as chat runs it (MiniLM and the offline NER)."""

from __future__ import annotations

import pytest

from tests.chat.reading import read_as_chat

FAQ = (
    "Ledgerly: common questions\n\nWhat is Ledgerly? Ledgerly is a bookkeeping app for small charities. It was built "
    "by Marrow Labs, a team of six based in Ghent.\n\nCan I use other currencies? Receipts can be recorded in 24 "
    "currencies."
)
FAQ_MORE = (
    "Where is my data kept? All data is kept in Dublin, on servers run by Scaleway, and copied every night to Paris."
    "\n\nHow do I leave? You can close your account at any time. Your receipts stay available for 60 days after you "
    "leave."
)


@pytest.mark.parametrize("question", ["How many currencies are supported?", "How many currencies can be used?"])
def test_a_sentence_counting_the_asked_noun_answers_without_a_chain(question):
    got = read_as_chat(question, FAQ, FAQ_MORE, title="faq.txt")
    assert got.answered and got.short == "24", got


@pytest.mark.parametrize(
    ("question", "text", "answer"),
    [
        (
            "How big is the yearly grant?",
            "The stipend is 24,000 to 26,000 pounds, plus a 2,500 pounds annual grant for travel.",
            "2,500 pounds",
        ),
        (
            "How large is the deposit?",
            "Rent is 950 pounds a month, and a 1,100 pounds deposit is held by the agency.",
            "1,100 pounds",
        ),
    ],
)
def test_the_sum_written_before_the_asked_noun_is_its_size(question, text, answer):
    got = read_as_chat(question, text, title="notes.txt")
    assert got.answered and got.short == answer, got
