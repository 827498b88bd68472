"""The extractive reader on a person named with their family or their employer (issue 26), in words of our own:
"given by the Ashdown family" answers "Who gave the painting?" with "Ashdown family", not "The Ashdown"; and "Dr Ruth
Okoye of Leeds Beckett University" answers "Who chairs the panel?" with the person, not where she works. Run as
chat runs it (MiniLM and the offline NER)."""

from __future__ import annotations

from tests.chat.reading import read_as_chat


def test_a_family_is_named_as_a_family():
    got = read_as_chat(
        "Who gave the painting to the gallery?",
        "The painting was given to the gallery in 1971 by the Ashdown family.",
        "It hangs in Room 4 beside two views of the harbour.",
        title="gallery.txt",
    )
    assert got.answered and got.short == "Ashdown family", got


def test_a_person_is_named_without_their_employer():
    got = read_as_chat(
        "Who chairs the panel?",
        "The panel chair, Dr Ruth Okoye of Leeds Beckett University, opens the session at 10am.",
        "Lunch is served in the atrium.",
        title="programme.txt",
    )
    assert got.answered and got.short == "Ruth Okoye", got
