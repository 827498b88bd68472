"""The extractive reader on who made a work when its sentence names several makers (issue 26), in words of our own:
"directed by Oren Vale, written by Karl Brandt and Lise Amundsen" answers "Which screenwriter worked on it?" with
the writers, not the director named first. The asked role noun says the act ("screenwriter": written by), whatever
the question's verb, and every name of a list after "by" is a doer. Run as chat runs it (MiniLM and the offline NER)."""

from __future__ import annotations

import pytest

from tests.chat.reading import read_as_chat

ONE_WRITER = (
    "Harbour of Glass is a 2009 thriller directed by Oren Vale, written by Lise Amundsen, and starring Tom Hale."
)
TWO_WRITERS = (
    "Harbour of Glass is a 2009 thriller directed by Oren Vale, written by Karl Brandt and Lise Amundsen, and starring "
    "Tom Hale."
)
ASIDE = "Oren Vale began his career making music videos in Bergen."
WRITERS = {"Karl Brandt", "Lise Amundsen", "Karl Brandt and Lise Amundsen"}


def test_the_asked_role_noun_picks_its_maker_over_the_director_named_first():
    got = read_as_chat("Which screenwriter worked on Harbour of Glass?", ONE_WRITER, ASIDE, title="film.txt")
    assert got.answered and got.short == "Lise Amundsen", got


@pytest.mark.parametrize(
    "question",
    [
        "Which screenwriter worked on Harbour of Glass?",
        "Who was the screenwriter of Harbour of Glass?",
        "Who co-wrote Harbour of Glass?",
    ],
)
def test_every_name_of_a_list_after_by_is_a_maker(question):
    got = read_as_chat(question, TWO_WRITERS, ASIDE, title="film.txt")
    assert got.answered and got.short in WRITERS, got


def test_the_director_is_still_the_director():
    got = read_as_chat("Who was the director of Harbour of Glass?", TWO_WRITERS, ASIDE, title="film.txt")
    assert got.answered and got.short == "Oren Vale", got
