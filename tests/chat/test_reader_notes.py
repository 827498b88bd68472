"""The extractive reader on notes of kinds a newcomer uploads (meeting minutes, a town's article, a product sheet, a
paper's abstract, a battle's history; issue 26), re-told here in other words and other places: a sentence calling a
thing by the noun its document defines it by ("Marrick is a fishing town ..." then "The town ...") is about it; a
first name opening a sentence is a name when the notes write it as one elsewhere; a move "from A to B" ends at B;
a measure is the number the asked quantity is "of"; "how long" is a time, never "5.0 Ah"; an acronym the notes
spell out counts as named; the doer may be named after "under"; a numbered item's title is no sentence; what a
sentence says was founded is not its founder; a name ending in the question's own is the thing asked about. Run as
chat runs it (MiniLM meaning and the offline NER's types)."""

from __future__ import annotations

import pytest

from exograph.core.llm.extractive_text import whole_sentences
from tests.chat.reading import read_as_chat

TOWN = (
    "Marrick is a fishing town on the east coast of Holdmere. Marrick's abbey was founded in 1180 by Cistercian monks.",
    "The town held its first fish market in 1312. With 18,400 residents at the last count it is the county's second "
    "town, and its lifeboat station has 24 volunteers.",
)
MINUTES = (
    "Attendees: Priya Raman, Tomasz Wierzbicki, Odile Brun. Apologies: none.",
    "Tomasz will draft the tender for the new boilers by Friday. Odile reported that the heating bills rose in March.",
)
CHOIR = ("The Fenwick choir's rehearsals moved from St Anne's Hall to the Corn Exchange in May because of the rent.",)
COMPRESSOR = ("The Tarka compressor weighs 23 kg and reaches a pressure of 8 bar from a standard socket.",)
MOWER = ("The Brisk mower's 5.0 Ah battery runs it for about 35 minutes on a full charge.",)
KETTLE = ("The Arlo kettle holds 1.7 litres and sells for 45 euros in the maker's own shops.",)
INDEX = ("On the legal test set, the new index lifts accuracy from 81.5 to 88.0 while halving memory use.",)
EXPEDITION = ("In 1821 an expedition of 40 men under Captain Ilse Varga crossed the Hallan pass in nine days.",)
LAB = ("In 2023 the Orme lab hired three postdoctoral research associates to run its field trials.",)


@pytest.mark.parametrize(
    ("question", "answer", "texts"),
    [
        # "the town" is Marrick: its first market, not the abbey's founding
        ("When did Marrick get its first fish market?", "1312", TOWN),
        # its residents, read through "it", not the lifeboat's volunteers
        ("How many people live in Marrick?", "18,400", TOWN),
        # a first name the NER misses, written as a name in the attendance line
        ("Who is writing the boiler tender?", "Tomasz", MINUTES),
        # where the rehearsals went, and where they came from when that is asked
        ("Where does the Fenwick choir rehearse now?", "Corn Exchange", CHOIR),
        ("Where did the Fenwick choir rehearse originally?", "St Anne's Hall", CHOIR),
        # the quantity asked is the one the number is "of"; "how long" is a time
        ("How much pressure does the Tarka compressor reach?", "8 bar", COMPRESSOR),
        ("How long does the Brisk mower's battery last?", "35 minutes", MOWER),
        # "what does it cost" asks for a sum
        ("What does the Arlo kettle cost?", "45 euros", KETTLE),
        # the end of a change, and its start when the question asks what it was before
        ("What accuracy does the new index reach on the legal test set?", "88.0", INDEX),
        ("What was the accuracy on the legal test set before the new index?", "81.5", INDEX),
        # the one an expedition went "under" led it
        ("Who led the 1821 expedition over the Hallan pass?", "Ilse Varga", EXPEDITION),
        # an acronym the notes spell out ("PRAs": postdoctoral research associates)
        ("How many PRAs did the Orme lab take on?", "three", LAB),
    ],
)
def test_the_reader_reads_notes_in_other_words(question, answer, texts):
    got = read_as_chat(question, *texts, title="notes.txt")
    assert got.answered and got.short == answer, got


@pytest.mark.parametrize(
    ("question", "answer", "text"),
    [
        # the name written before the asked noun is the name asked for
        (
            "What is the name of the club's home ground?",
            "Kiln Road",
            "The Rovers play their home games at the Kiln Road ground, which holds 3,000 people.",
        ),
        # "per night" is the rate's unit, not a date asked for
        (
            "What is the hotel allowance per night?",
            "90 euros",
            "Staff who travel for work receive a hotel allowance of 90 euros.",
        ),
        # a version's point is no sentence end, and "now" is no part of it
        (
            "Which Node version is required now?",
            "Node 20.11",
            "Support for Node 16 has ended; the minimum version is now Node 20.11.",
        ),
        # "the Bristol firm X": Bristol says where the builder is
        (
            "Who built the church organ?",
            "Harcourt Organs",
            "The church organ was built by the Bristol firm Harcourt Organs in 1902.",
        ),
        # costs "covered by" someone: who pays
        (
            "Who pays for the school buses?",
            "Harlow Trust",
            "The running costs of the school buses are covered by the Harlow Trust.",
        ),
    ],
)
def test_the_reader_reads_names_sums_and_doers_in_other_words(question, answer, text):
    got = read_as_chat(question, text, title="notes.txt")
    assert got.answered and got.short == answer, got


def test_a_numbered_items_title_is_not_a_sentence():
    sentences = whole_sentences("2. Boiler replacement. Tomasz will draft the tender by Friday.")
    assert sentences == ["Tomasz will draft the tender by Friday."]


@pytest.mark.parametrize(
    ("question", "texts"),
    [
        # the brewery was founded; nothing says who founded the choir
        (
            "Who founded the Fenwick choir?",
            (
                "The Fenwick choir sings at the Harbour Church. The Tessel Brewery, founded in 1880, pays for its tours.",
            ),
        ),
        # "Kelby Rope Museum" is the museum asked about, not its designer, and no one else is named
        (
            "Who designed the Rope Museum?",
            ("The Kelby Rope Museum opened in 2001 and was designed to look like a net loft.",),
        ),
    ],
)
def test_the_reader_refuses_what_the_notes_do_not_say(question, texts):
    got = read_as_chat(question, *texts, title="notes.txt")
    assert not got.answered, got


def test_she_in_a_later_passage_of_a_life_means_its_subject_not_a_name_in_passing():
    # The second passage of a chemist's life opens on another's name, in passing; "she" is the chemist, whom the
    # document's first sentence is about (it was the biochemist who confirmed her result).
    from exograph.core.llm.extractive_referents import passage_lead, pronoun_referents

    document = (
        "Hedda Lorant was a Hungarian chemist who studied enzymes. She was born in Győr. "
        "The finding was confirmed by the Austrian physician Otto Brenner in 1912. She was elected to the academy in 1920."
    )
    passage = [
        "The finding was confirmed by the Austrian physician Otto Brenner in 1912.",
        "She was elected to the academy in 1920.",
    ]
    lead = passage_lead(passage, "lorant.txt", document)
    assert lead == "Hedda Lorant"
    assert pronoun_referents(passage, lead)[1] == "Hedda Lorant"


def test_a_figure_may_describe_the_thing_the_question_names_in_that_things_own_passage():
    # "the 1998 novel": 1998 is in the novel's passage, the broadcaster in the serial's; the answer's passage need
    # not repeat the year (it was refused as "not the figure asked for")
    got = read_as_chat(
        "The 1998 novel Tidewater was later adapted into a radio serial for which broadcaster?",
        "Tidewater is a 1998 novel by the Cork writer Mairead Lyne, set among oyster farmers.",
        "Tidewater is an Irish radio serial based on the novel of the same name, which was first broadcast on Lyric FM "
        "in 2004.",
        title="notes.txt",
    )
    assert got.answered and got.short == "Lyric FM", got


def test_a_questions_it_is_the_notes_subject_never_the_answer():
    # "it" is the lamp the notes are about; the magazine that named it is the answer (was "Vela")
    got = read_as_chat(
        "Which magazine gave it an award?",
        "The Vela is a brass desk lamp made in Porto by Atelier Sousa.",
        "The design magazine Lumen Review named the Vela its lamp of the year in 2023.",
        title="notes.txt",
    )
    assert got.answered and got.short == "Lumen Review", got
