"""A sentence opening with a noun its document defines a name by ("The brewery ...", after "Wold Farm is a small
dairy") is about that name, not the nearest earlier name (the newcomer audit's research finding "Tolbridge Mill buys
40 sacks", which the notes say of the bakery)."""

from __future__ import annotations

from exograph.core.llm.extractive_referents import defined_nouns, pronoun_referents, resolved
from tests.chat.reading import read_as_chat

NOTE = (
    "Wold Farm is a small brewery near Malton, run by the Oduya family. Ryedale Mills, a grain merchant in Pickering, "
    "supplies its barley. The brewery sells 900 litres of beer a day."
)
SENTENCES = [
    "Wold Farm is a small brewery near Malton, run by the Oduya family.",
    "Ryedale Mills, a grain merchant in Pickering, supplies its barley.",
    "The brewery sells 900 litres of beer a day.",
]


def test_a_defined_noun_opening_a_sentence_means_the_name_it_defines() -> None:
    referents = pronoun_referents(SENTENCES, "Wold Farm", defined_nouns(SENTENCES))
    assert referents[2] == "Wold Farm"
    assert "Wold Farm sells 900 litres" in resolved(SENTENCES[2], referents[2])  # as a research finding reads it


def test_the_reader_takes_the_defined_name_as_the_sentence_subject() -> None:
    read = read_as_chat("How much beer does Wold Farm sell each day?", NOTE)
    assert read.answered and read.short == "900 litres", read.text
