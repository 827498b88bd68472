"""The extractive reader on a price asked of a product whose evidence gives only its version (issue 26), in words of
our own: "Quillpad 7.1 was released on 2 March" does not say what Quillpad costs; a number written right after a
name is its version, never a sum. Run as chat runs it (MiniLM and the offline NER)."""

from __future__ import annotations

from tests.chat.reading import read_as_chat

RELEASE = "Quillpad 7.1 was released on 2 March 2026 and runs on Linux and macOS."


def test_a_version_after_a_name_is_no_price():
    got = read_as_chat("What is the price of Quillpad?", RELEASE, title="quillpad.txt")
    assert not got.answered, got


def test_the_price_beside_the_version_still_answers():
    priced = "A licence for Quillpad costs 49 pounds a year."
    got = read_as_chat("What is the price of Quillpad?", RELEASE, priced, title="quillpad.txt")
    assert got.answered and got.short == "49 pounds", got
