"""Names as a reader of the whole document sees them (extraction.names) and short forms folded into the entity
they name (extraction.resolve): issue 25, unseen documents."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from exograph.documents.extraction import Entity, Extraction, Mention, Relation, document_extract, extraction_resolve
from exograph.documents.extraction.names import extraction_common_terms, name_tidy


@dataclass(frozen=True)
class C:
    id: str
    text: str


@pytest.mark.parametrize(
    "raw, tidy",
    [
        ("Ingrid Solberg∗", "Ingrid Solberg"),  # a footnote mark ends the name
        ("Tomas Vrba+ Kestrel Labs", "Tomas Vrba"),
        ("Page 12 Harbour Authority", "Harbour Authority"),  # a running head
        ("OVERVIEW The Marine Salvage Act", "The Marine Salvage Act"),  # a heading glued on
        ("Salvage Claims Finally", "Salvage Claims"),  # the next sentence's adverb
        ("Ballast Exchange Rules Section", "Ballast Exchange Rules"),  # a bare label word
        ("Port Safety Board (PSB", "Port Safety Board"),  # a parenthesis left open after a space
        ("Clause 7(b)(2", "Clause 7(b)(2)"),  # ... and glued to the name
        ("Vesna Holm (Chair", "Vesna Holm (Chair)"),  # not an acronym: closed
        ("Queen of Norway", "Queen of Norway"),  # a name ending in -ly is no adverb ("Italy", "July")
        ("Net Pay Gross Pay Tax Due", None),  # a table's header row
        ("Bureau of Standards for Weights and Standards", "Bureau of Standards for Weights and Standards"),
        ("4,210 17%", None),  # numbers only: a table row
        ("3.5 2.25x", None),
        ("2,500", "2,500"),
        ("Okafor 2019-04-02", "Okafor"),  # a date after a name
        ("Notice 2019-41", "Notice 2019-41"),  # a numbered notice is no date
        ("Runs Steps Runs/Step Gain", None),  # a header row written with slashes
        ("Mohammad R. Haghighat$", "Mohammad R. Haghighat"),  # a dollar sign as the author's footnote mark
        ("Idris Kamara$, Lena Ortiz", "Idris Kamara"),
        ("Ke$ha", "Ke$ha"),  # ... not inside a name
        ("Tern roadmap 2011 - http://tern-users.org/lists/2011- 02/msg00051.html", "Tern roadmap 2011"),  # a URL
        ("www.harbourtrust.org/minutes", None),
        ("Array // test whether primes is an array", "Array"),  # a code comment after a word of code
        ("Queue //", "Queue"),
        ("AC/DC", "AC/DC"),  # one slash is part of a name
    ],
)
def test_a_span_s_text_is_tidied_into_the_name_it_stands_for(raw: str, tidy: str | None) -> None:
    assert name_tidy(raw) == tidy


def _document(*entities: tuple[str, str]) -> Extraction:
    names = [Entity(name, kind) for name, kind in entities]
    return Extraction(
        entities=names,
        mentions=[Mention("c1", e.name, e.type) for e in names],
        relations=[Relation(names[0].name, names[0].type, names[1].name, names[1].type, "RELATED_TO", ["c1"])],
    )


def test_a_name_the_document_also_writes_in_lowercase_is_a_common_term() -> None:
    texts = [
        "Sorting Networks are introduced in the first part. Merge Step one follows; Kestrel runs on it.",
        "Each sorting network is built from comparators, and a merge step joins two halves. See kestrel.org/docs.",
        "Dana Whitlow wrote the Comparator Lemma; the proof of the comparator lemma is short.",
    ]
    extraction = _document(
        ("Sorting Networks", "ORGANIZATION"),
        ("Merge", "PERSON"),  # a capitalised common word: "merge" is written lowercase
        ("Kestrel", "ORGANIZATION"),  # only an address writes it lowercase: still a name
        ("Dana Whitlow", "PERSON"),
        ("Comparator Lemma", "PERSON"),  # its last word is written lowercase: no person
    )
    judged = {e.name: e.type for e in extraction_common_terms(extraction, texts).entities}
    assert judged == {
        "Sorting Networks": "CONCEPT",
        "Kestrel": "ORGANIZATION",
        "Dana Whitlow": "PERSON",
        "Comparator Lemma": "CONCEPT",
    }


def test_an_acronym_seen_once_in_a_long_document_a_code_and_two_names_side_by_side_are_not_names() -> None:
    texts = [
        "The QRZ method was tried once. Ilse Brandt sailed in the Harbour Regatta near Lyon.",
        "The BVK tables hold the results; BVK is the baseline. T9 is the test rig.",
        "Harbour Regatta Lyon is where a table cell ran into the next one; Ilse Brandt Lyon too.",
    ]
    extraction = _document(
        ("QRZ", "ORGANIZATION"),
        ("BVK", "ORGANIZATION"),
        ("T9", "LOCATION"),
        ("Ilse Brandt", "PERSON"),
        ("Lyon", "LOCATION"),
        ("Harbour Regatta", "EVENT"),
        ("Harbour Regatta Lyon", "EVENT"),
        ("Ilse Brandt Lyon", "PERSON"),  # a person's name is left alone: "Jack London" is one person
    )
    judged = extraction_common_terms(extraction, texts)
    assert {e.name: e.type for e in judged.entities} == {
        "BVK": "ORGANIZATION",
        "T9": "CONCEPT",
        "Ilse Brandt": "PERSON",
        "Lyon": "LOCATION",
        "Harbour Regatta": "EVENT",
        "Ilse Brandt Lyon": "PERSON",
    }
    assert {m.name for m in judged.mentions} <= {e.name for e in judged.entities}
    assert not judged.relations  # its one relation touched a dropped name
    odd = _document(
        ("Lena Fry", "PERSON"), ("Brent Oct 3-9", "PERSON"), ("417", "PRODUCT"), ("Hugh Ross, 3rd Baronet", "PERSON")
    )
    judged_odd = {e.name: e.type for e in extraction_common_terms(odd, texts).entities}
    assert judged_odd == {"Lena Fry": "PERSON", "Brent Oct 3-9": "CONCEPT", "Hugh Ross, 3rd Baronet": "PERSON"}
    doubled = ["Oskar pays tax. Oskar Oskar is a row. Oskar again.", "Bang Bang is a song; Bang Bang charted."]
    judged = extraction_common_terms(_document(("Oskar Oskar", "PERSON"), ("Bang Bang", "WORK")), doubled)
    assert [e.name for e in judged.entities] == ["Bang Bang"]
    # a one-passage document: a single mention of an acronym is all it has
    alone = extraction_common_terms(_document(("QRZ", "ORGANIZATION"), ("Lyon", "LOCATION")), texts[:1])
    assert "QRZ" in {e.name for e in alone.entities}


def test_a_surname_an_initial_an_owner_s_thing_and_an_acronym_plural_fold_into_the_one_entity() -> None:
    extraction = Extraction(
        entities=[
            Entity("Marisol Ortega", "PERSON"),
            Entity("Ortega", "LOCATION"),  # the model's misreading of the short form
            Entity("M. Ortega", "PERSON"),
            Entity("Tobias Renn", "PERSON"),
            Entity("Greta Renn", "PERSON"),
            Entity("Renn", "PERSON"),  # two people of that surname: left alone
            Entity("Widgetron", "PRODUCT"),
            Entity("Acme’s Widgetron", "PERSON"),  # the model took the owner's thing for a person
            Entity("GPU", "CONCEPT"),
            Entity("GPUs", "CONCEPT"),
            Entity("Sky- Lark", "PRODUCT"),  # a line break's hyphen, beside the name written whole
            Entity("SkyLark", "PRODUCT"),
            Entity("Baden- Baden", "LOCATION"),  # nothing written whole: itself
            Entity("Harbour Safety Co de", "ORGANIZATION"),  # letter spacing splits a word
            Entity("Harbour Safety Code", "WORK"),
        ],
        mentions=[Mention("c2", "Ortega", "LOCATION"), Mention("c3", "Acme’s Widgetron", "PERSON")],
    )
    resolved = {e.name: e for e in extraction_resolve(extraction).entities}
    assert set(resolved) == {
        "Marisol Ortega", "Tobias Renn", "Greta Renn", "Renn", "Widgetron", "GPU", "SkyLark", "Baden- Baden", "Harbour Safety Code"
    }  # fmt: skip
    assert resolved["Marisol Ortega"].type == "PERSON"
    assert {"Ortega", "M. Ortega"} <= set(resolved["Marisol Ortega"].aliases)
    assert "Acme’s Widgetron" in resolved["Widgetron"].aliases and resolved["Widgetron"].type == "PRODUCT"
    assert "GPUs" in resolved["GPU"].aliases
    mentions = {(m.chunk_id, m.name) for m in extraction_resolve(extraction).mentions}
    assert {("c2", "Marisol Ortega"), ("c3", "Widgetron")} <= mentions


def test_a_long_document_gives_typed_names_without_its_headings_or_one_off_acronyms() -> None:
    chunks = [
        C("a", "SURVEY The Northbridge Rowing Club met in Glasgow in March 2019. Its captain, Fiona Kerr, spoke."),
        C("b", "A rowing club needs a boathouse. The WXQ grant paid for it, and Kerr thanked the council."),
        C("c", "Fiona Kerr said the Northbridge Rowing Club would race in Glasgow again in 2020."),
    ]
    entities = {e.name: e for e in document_extract(chunks).entities}
    assert "Northbridge Rowing Club" in entities and not [n for n in entities if n.startswith("SURVEY")]
    assert "WXQ" not in entities  # an acronym written once in a document of several passages
    assert "Kerr" not in entities and "Kerr" in entities["Fiona Kerr"].aliases
    assert entities["Fiona Kerr"].type == "PERSON"


def test_a_one_word_person_needs_the_document_to_show_a_person() -> None:
    texts = [
        "Compilers for Zephyrine are studied here; the Zephyrine runtime and most Zephyrine programs are small.",
        "Our scheduler is written in Quolla. As Halvorsen et al. note, Dr. Abernathy measured it first.",
        "Brisbois later rewrote the allocator, and she kept the old interface. Ingrid Solvang reviewed it.",
        "Ingrid wrote the tests. Okonkwo (12) proposed a cheaper barrier. Nwosu was a Ghanaian poet and engineer.",
        "Gramercy is aged 40 in the example. Tenerel appears in one table.",
    ]
    people = ["Halvorsen", "Abernathy", "Brisbois", "Ingrid", "Okonkwo", "Nwosu", "Gramercy"]
    extraction = _document(
        ("Zephyrine", "PERSON"),  # a language: only things are said of it
        ("Quolla", "PERSON"),
        ("Tenerel", "PERSON"),  # nothing said of it at all
        ("Ingrid Solvang", "PERSON"),  # two words: the model's type stands
        *((name, "PERSON") for name in people),
    )
    judged = {e.name: e.type for e in extraction_common_terms(extraction, texts).entities}
    assert judged == {
        "Zephyrine": "CONCEPT",
        "Quolla": "CONCEPT",
        "Tenerel": "CONCEPT",
        "Ingrid Solvang": "PERSON",
        **dict.fromkeys(people, "PERSON"),
    }


def test_a_language_a_paper_writes_alone_is_no_person_in_the_document_graph() -> None:
    chunks = [
        C("a", "Interpreters for dynamic languages such as Zorvex and Kotlin are slow. The Zorvex interpreter spends"),
        C("b", "its time in dispatch, and Kotlin code is compiled ahead of time. Mirela Hascu timed both on a laptop."),
        C("c", "Hascu found that Zorvex loops run twice as fast once traced; Kotlin gains less."),
    ]
    entities = {e.name: e.type for e in document_extract(chunks).entities}
    assert entities.get("Mirela Hascu") == "PERSON"
    assert entities.get("Zorvex") not in (None, "PERSON") and entities.get("Kotlin") not in (None, "PERSON")
