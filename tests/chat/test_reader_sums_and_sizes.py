"""The extractive reader on sums, sizes and the action a question asks about (issue 26), in words of our own: "how
much do the jugs sell for" and "how much does a chef earn" ask for a sum of money, never the "eleven years" a
sentence nearer the question's words gives; "how high", "how tall" and "how deep" ask for a size in space, never the
"six hours" a walk takes (and without one the reader refuses); a sentence opening on a time ("This year the runners
raised ...") is not about another thing than the one asked. Run as chat runs it (MiniLM and the offline NER)."""

from __future__ import annotations

import pytest

from tests.chat.reading import read_as_chat

POTTER = ("Maya Cole has sold bowls at the Lewes market for eleven years. A large bowl goes for 35 pounds.",)
JUGS = ("The jugs sell well in the summer, and the potter has made them for eleven years. Each one is priced at 40 "
        "pounds.",)  # fmt: skip
FUN_RUN = ("The fun run has been held for twelve years. This year the runners raised 4,500 pounds for the hospice.",)
HILL = ("Reaching the top of Carn Dubh takes about six hours from the car park. The hill rises to 950 metres.",)


@pytest.mark.parametrize(
    ("question", "answer", "texts"),
    [
        ("How much do her bowls sell for?", "35 pounds", POTTER),
        ("How much do the jugs sell for?", "40 pounds", JUGS),
        ("How much did the fun run raise?", "4,500 pounds", FUN_RUN),
        ("How high is Carn Dubh?", "950 metres", HILL),
    ],
)
def test_a_sum_or_a_size_is_answered_in_its_own_unit(question, answer, texts):
    got = read_as_chat(question, *texts, title="notes.txt")
    assert got.answered and got.short == answer, got


@pytest.mark.parametrize(
    ("question", "text"),
    [
        ("How high does the lighthouse stand?", "The keeper's climb up its stairs took ten minutes, twice a night."),
        ("How tall is the tower?", "The tower was built over three years and opened in 1902."),
    ],
)
def test_a_size_in_space_is_never_a_time(question, text):
    got = read_as_chat(question, text, title="notes.txt")
    assert not got.answered, got
