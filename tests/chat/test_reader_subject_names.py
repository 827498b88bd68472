"""The extractive reader on a name with its common noun (issue 26), in words of our own: "Which ingredient of the
glaze gives it its blue?" over "Cobalt oxide is a compound ..." is answered "Cobalt oxide", the subject its sentence
defines, not the bare capital "Cobalt". Run as chat runs it (MiniLM and the offline NER)."""

from __future__ import annotations

from tests.chat.reading import read_as_chat

GLAZE = (
    "Delfter glaze is a mixture of Cobalt oxide and tin ash, fired at about 1,000 degrees.",
    "Cobalt oxide is a compound that turns the glaze a deep blue when fired.",
)


def test_a_name_opening_its_definition_keeps_its_common_noun():
    got = read_as_chat("Which ingredient of Delfter glaze turns it blue?", *GLAZE, title="glaze.txt")
    assert got.answered and got.short == "Cobalt oxide", got
