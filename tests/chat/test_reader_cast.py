"""The extractive reader on a film's cast (issue 26), in words of our own: "the movie" of a second sentence is the
film a first one defines ("a 1952 film noir"), a film that "stars X, Y and Z" has X star in it, and a name whose own
sentence defines it as the asked noun ("X (born Y) was an Austrian actor") is the answer, never a bridge to the birth
name beside it. Run as chat runs it (MiniLM and the offline NER)."""

from __future__ import annotations

import pytest

from tests.chat.reading import read_as_chat

FILM = "Grey Harbour is a 1952 film noir directed by Anton Hale and written by Mara Quist from a story by Ivo Denk."
CAST = "The movie stars Walter Brandt, Helen Varga and Paul Orme, with music by Tomas Reyl."
ACTOR = "Walter Brandt (born Walther Brandtner; 1910 – 1979) was an Austrian stage actor and singer known for musicals."
OTHER = "Grey Harbour is also the name of a fishing village on the coast of Maine."


@pytest.mark.parametrize(
    "question",
    [
        "Which Austrian actor and singer starred in Grey Harbour?",
        "Which stage actor starred in the 1952 picture Grey Harbour?",
    ],
)
def test_the_cast_a_film_stars_answers_who_starred_in_it(question):
    got = read_as_chat(question, FILM, CAST, ACTOR, OTHER, title="grey-harbour.txt")
    assert got.answered and got.short == "Walter Brandt", got


def test_the_movie_is_the_film_its_document_defines():
    got = read_as_chat("Who starred in Grey Harbour?", FILM, CAST, OTHER, title="grey-harbour.txt")
    assert got.answered and got.short in {"Walter Brandt", "Walter Brandt, Helen Varga and Paul Orme"}, got
    assert "Anton Hale" not in got.short
