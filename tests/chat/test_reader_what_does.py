"""The extractive reader on "what <verb>s ...?" (issue 26), in words of our own: the answer is what the evidence says
does it, the whole subject before the verb ("Quantum error correction protects qubits ...": not "Quantum", the
capital its sentence opens with), or the agent of the passive ("the harbour was closed by a storm surge")."""

from __future__ import annotations

import pytest

from tests.chat.reading import read_as_chat


@pytest.mark.parametrize(
    ("question", "text", "answer"),
    [
        (
            "What shields qubits from decoherence?",
            "Quantum error correction shields qubits from noise and decoherence.",
            "Quantum error correction",
        ),
        (
            "What closed the harbour last winter?",
            "Last winter the harbour was closed by a storm surge for eleven days.",
            "storm surge",
        ),
    ],
)
def test_what_does_the_verb_is_answered_with_its_doer(question, text, answer):
    got = read_as_chat(question, text, title="notes.txt")
    assert got.answered and got.short == answer, got
