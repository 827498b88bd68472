"""The extractive reader on a third round of notes (a press release, a gallery guide, a school letter, a lease, a
recipe; issue 26), re-told here in other words and other places: a place "at the" X is a where; a who-question in
the progressive ("who is funding") asks the doer of its verb; "My" opening a sentence is no name; a name holding the
asked noun ("River Noe" for "which river") is of the asked kind whatever the NER says; the object of the question's
closing verb answers it ("visit the Blue John Cavern"); a sum the sentence gives as another sum ("revenue of ...")
is not the price paid; a count is never a sum of money; "six months' notice" measures notice; "two and a half
hours" is one measure; a time of day answers "what time"; a month alone answers "when"; a sentence opening on
another thing than the one the question names is not its answer. Run as chat runs it (MiniLM and the offline NER)."""

from __future__ import annotations

import pytest

from tests.chat.reading import read_as_chat

FERRY = (
    "Harbury Ferries will buy the Skerra Line for 18 million euros. Harbury posted profits of 95 million euros in "
    "2025. The sale should be finished in September, once the regulator has approved it.",
)
MUSEUM = (
    "The Orchard Rooms exhibition has 85 prints by the engraver Tobias Lund. Entry costs 9 euros and the catalogue 30 euros.",
    "The exhibition was put together by Dr Hanna Berg and is funded by the Alder Foundation. Lund studied at the Royal "
    "Academy of Fine Arts.",
)
OUTING = (
    "On Friday the class will sketch the Mill Brook at Harwood and tour the Greystone Quarry. The bus leaves the "
    "front gate at 7:45 and is back by 5 pm.",
)
TENANCY = ("The tenancy lasts five years, and either side may end it on three months' notice in writing.",)
STEW = ("This lamb stew feeds four and needs about three and a half hours in a low oven.",)
MERGER = (
    "OSLO, 9 June 2026 — Brekke Tools, the Bergen-based maker of hand saws, will merge with Lyngen Steel. Its chief "
    "executive, Ola Nes, will leave Lyngen's board. Brekke's chief executive, Kari Moe, will run the new group.",
)
GLOSSARY = ('In sailing, "luff" means the front edge of a sail; the boom is the spar along its foot.',)
CLUB = ("Members pay their dues monthly by standing order. The season runs from 2 April to 30 September.",)
BAKERY = ("My uncle Piet opened the bakery in Delft. Its sourdough uses rye from the Molen De Roos near Leiden.",)


@pytest.mark.parametrize(
    ("question", "answer", "texts"),
    [
        # the price paid is the sum the purchase is "for", not the profits the buyer posted
        ("How much is Harbury spending on the purchase?", "18 million euros", FERRY),
        # a month alone answers when
        ("When will the sale be completed?", "September", FERRY),
        # a count of prints, never the 30 euros the catalogue costs
        ("How many works does the exhibition hold?", "85", MUSEUM),
        # who pays for it, asked in the progressive: the funder, not the curator
        ("Who is sponsoring the exhibition?", "Alder Foundation", MUSEUM),
        # studied "at the" academy: where, with its whole name
        ("Where was Lund trained?", "Royal Academy of Fine Arts", MUSEUM),
        # the name holding the asked noun, and the object of the closing verb
        ("Which brook will the class draw?", "Mill Brook", OUTING),
        ("Which quarry will the class go round?", "Greystone Quarry", OUTING),
        # a time of day for "what time"
        ("At what time does the bus set off?", "7:45", OUTING),
        # the notice, measured in the genitive, not the term of the tenancy
        ("How much notice ends the tenancy?", "three months", TENANCY),
        # "three and a half hours" is one measure
        ("How long does the stew cook?", "three and a half hours", STEW),
        # whose role the question asks: Brekke's chief executive, not the one "its" gives to another firm
        ("Who is Brekke's boss?", "Kari Moe", MERGER),
        # a news dateline is where the release was written; "the Bergen-based maker" says Bergen
        ("Where is Brekke Tools based?", "Bergen", MERGER),
        # what a word is said to mean
        ("What does luff mean?", "the front edge of a sail", GLOSSARY),
        # how often, and a season that "runs from" one date to another starts on the first
        ("How often do members pay?", "monthly", CLUB),
        ("When does the season begin?", "2 April", CLUB),
    ],
)
def test_the_reader_reads_a_third_round_of_notes_in_other_words(question, answer, texts):
    got = read_as_chat(question, *texts, title="notes.txt")
    assert got.answered and got.short == answer, got


def test_my_opening_a_sentence_is_no_name_to_follow():
    # "My uncle Piet": "My" is no bridge to the bakery's town; the rye comes from near Leiden, not from Delft
    got = read_as_chat("Where does the rye come from?", *BAKERY, title="notes.txt")
    assert got.answered and got.short != "Delft" and not got.chain, got


def test_a_sentence_about_another_thing_does_not_answer_the_questions_noun():
    texts = (
        "The merger is due to close in October. The festival was opened by the mayor, Ines Koller.",
        "Tickets for the festival are sold at the town hall.",
    )
    got = read_as_chat("When does the festival close?", *texts, title="notes.txt")
    assert got.short != "October", got


def test_a_unit_after_its_number_is_never_a_name():
    # "900 GB of scans": GB is the measure's unit, not the system the archive moves to
    texts = (
        "The team will move the archive to a new store next month. The archive holds 900 GB of scans, and the new "
        "store keeps 40 GB free for growth.",
    )
    for question in ("Which system will hold the archive?", "Which format are the scans in?"):
        got = read_as_chat(question, *texts, title="notes.txt")
        assert got.short != "GB", (question, got)


def test_meaning_alone_carries_a_sentence_sharing_no_word_with_the_question():
    texts = (
        "Dear members, the club dinner is on 3 June at the Old Mill. Tickets cost 30 pounds each.",
        "Payment is due by 15 May through the club's website.",
    )
    got = read_as_chat("What is the last day for paying?", *texts, title="notes.txt")
    assert got.answered and got.short == "15 May", got


def test_a_day_written_after_its_month_is_no_count():
    # "born March 12, 1961": 12 is a day, not how many books she wrote; the notes give no count
    texts = ("Ilse Brandt (born March 12, 1961) is a German novelist who has written novels since 1990.",)
    got = read_as_chat("How many novels has Ilse Brandt written?", *texts, title="notes.txt")
    assert got.short != "12", got


def test_a_chains_far_end_for_how_long_is_a_length_with_its_unit():
    texts = (
        "The Harrow Valley links the two towns of Elmsford and Caddon, and is crossed by the Caddon Viaduct.",
        "The Caddon Viaduct is 1.2 km long and was opened in 1874.",
    )
    got = read_as_chat("How long is the viaduct that crosses the valley linking Elmsford and Caddon?", *texts)
    assert got.short == "1.2 km", got
