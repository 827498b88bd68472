"""Two-link chains the extractive default follows to the far end when the question's relation is said in words no
relation family knows ("presides over" for "chaired by", "operates" for "run by", "discovered" for "identified"),
and off-topic questions refused, over one graph holding every chain (issue 26, held-out set of the third session;
domains: law, shipping, medicine, sport, music, education, farming). Written for this project, invented names."""

from __future__ import annotations

import pytest

from exograph.core.llm.extractive import Statement, extract_answer
from exograph.core.scope import Scope
from exograph.graphs.services import graph_create

pytestmark = pytest.mark.django_db

MESSAGES = "/api/v1/chat/messages/"
# (question, far end, first link, second link, distractor naming the bridge, entities of the three documents)
CHAINS = [
    ("Who presides over the court that heard the Dunmore pension case?", "Helena Marsh",
     "The Dunmore pension case was decided by the Northern Appeals Court.",
     "The Northern Appeals Court is chaired by Helena Marsh, a former prosecutor.",
     "The Northern Appeals Court sits in a granite building near the river.",
     [("Dunmore", "event"), ("Northern Appeals Court", "organization"), ("Helena Marsh", "person")]),
    ("Who operates the port where the freighter Coral Dawn is registered?", "Eastbank Port Authority",
     "The freighter Coral Dawn is registered at the port of Saltmere.",
     "The port of Saltmere is run by the Eastbank Port Authority.",
     "Saltmere has a lighthouse painted in red and white stripes.",
     [("Coral Dawn", "product"), ("Saltmere", "location"), ("Eastbank Port Authority", "organization")]),
    ("Who discovered the bacterium that causes Marlow fever?", "Yuki Tanabe",
     "Marlow fever is caused by the bacterium Tessaria ovalis.",
     "Tessaria ovalis was first identified by the microbiologist Yuki Tanabe in 1962.",
     "Tessaria ovalis grows slowly in cold water.",
     [("Marlow fever", "concept"), ("Tessaria ovalis", "concept"), ("Yuki Tanabe", "person")]),
    ("How many beds does the hospital that employs nurse Tobias Eke have?", "420",
     "Nurse Tobias Eke works on the night shift at St Brennan's Hospital.",
     "St Brennan's Hospital has 420 beds and a busy trauma unit.",
     "St Brennan's Hospital was rebuilt after a fire in 1978.",
     [("Tobias Eke", "person"), ("St Brennan's Hospital", "organization")]),
    ("Who coaches the team that Ines Volkova captains?", "Piotr Lamm",
     "Ines Volkova is the captain of the Kestrel Bay Hockey Club.",
     "Kestrel Bay Hockey Club is trained by the coach Piotr Lamm.",
     "Kestrel Bay Hockey Club sold out every home game last season.",
     [("Ines Volkova", "person"), ("Kestrel Bay Hockey Club", "organization"), ("Piotr Lamm", "person")]),
]  # fmt: skip
OFF_TOPIC = [
    "What is the boiling point of mercury?",
    "Who painted the ceiling of the Sistine Chapel?",
    "How many moons does Neptune have?",
    "When did the Berlin Wall fall?",
    "Which team won the 1995 Rugby World Cup?",
]


@pytest.fixture
def heldout_graph(alice, write_doc):  # type: ignore[no-untyped-def]
    """Every chain's two links and distractor, one document each, in one private graph."""
    graph = graph_create(actor=alice, name="Held-out chains", scope=Scope.PRIVATE)
    for number, (_, _, first, second, distractor, entities) in enumerate(CHAINS):
        for part, text in (("first", first), ("second", second), ("other", distractor)):
            write_doc(
                graph,
                alice,
                texts=[text],
                entities=[(name, kind, "") for name, kind in entities if name.casefold() in text.casefold()],
                filename=f"chain{number}-{part}.txt",
            )
    return graph


@pytest.mark.parametrize("engine", ["graph", "rag"])
@pytest.mark.parametrize("chain", CHAINS[:3], ids=["presides", "operates", "discovered"])
def test_a_chain_asked_in_unknown_words_is_answered_with_the_far_end(  # type: ignore[no-untyped-def]
    alice, alice_client, heldout_graph, fund, engine, chain
):
    question, far_end, first, second, distractor, _ = chain
    fund(alice, 10)
    body = alice_client.post(MESSAGES, {"message": question, "reasoning_engine": engine}, format="json").json()
    # Was the bridge ("Northern Appeals Court", "Saltmere", "Tessaria"): what the question describes, not asks.
    assert body["short_answer"] == far_end, body["answer"]
    cited = {item["text"] for item in body["evidence"]}
    assert first in cited and second in cited and distractor not in cited, body["evidence"]
    assert body["answered"] is True and body["grounded"] is True


@pytest.mark.parametrize("chain", CHAINS[3:], ids=["how-many", "coaches"])
def test_chains_whose_relation_words_are_known_still_reach_the_far_end(alice, alice_client, heldout_graph, fund, chain):  # type: ignore[no-untyped-def]
    question, far_end, first, second, _, _ = chain
    fund(alice, 10)
    body = alice_client.post(MESSAGES, {"message": question, "reasoning_engine": "graph"}, format="json").json()
    assert body["short_answer"] == far_end, body["answer"]
    assert {first, second} <= {item["text"] for item in body["evidence"]}


@pytest.mark.parametrize("engine", ["graph", "rag"])
def test_questions_the_chains_do_not_answer_are_refused(alice, alice_client, heldout_graph, fund, engine):  # type: ignore[no-untyped-def]
    fund(alice, 50)
    for question in OFF_TOPIC:
        body = alice_client.post(MESSAGES, {"message": question, "reasoning_engine": engine}, format="json").json()
        assert body["answered"] is False and body["grounded"] is False, (question, body["answer"])
        assert body["answer"].startswith("Your documents don't say"), body["answer"]


def test_the_bridge_is_never_the_answer_when_a_sentence_names_what_it_leads_to() -> None:
    """The reader alone: the second link shares no word with the question's relation ("oversees" / "supervised")."""
    statements = [
        Statement(1, "The Larkin canal was dug under the direction of the Fenmoor Drainage Board."),
        Statement(2, "The Fenmoor Drainage Board is supervised by Odile Brannagh."),
        Statement(3, "The Fenmoor Drainage Board meets twice a year."),
    ]
    result = extract_answer(question="Who oversees the board that dug the Larkin canal?", statements=statements)
    assert result.short == "Odile Brannagh" and result.chain == [2, 1], result  # was "Fenmoor Drainage Board"


def _typed(question: str, texts: list[str]) -> str:
    from exograph.chat.generation import _entity_types

    statements = [Statement(n, text) for n, text in enumerate(texts, start=1)]
    return extract_answer(question=question, statements=statements, entity_types=_entity_types()).short


def test_the_short_answer_is_of_the_type_the_question_asks_for() -> None:
    """The NER's types (the offline extractor's model) pick the span of the asked kind, not the first capitalised one."""
    # A person is not a city: was "Karl Jessup".
    assert (
        _typed(
            "Which city is the surgeon Nadia Farrow from?",
            [
                "The surgeon Nadia Farrow trained under Karl Jessup before she returned to Port Elwyn, where she was born."
            ],
        )
        == "Port Elwyn"
    )
    # "which company": a body, not the actress named first (was "Lena Moritz").
    assert (
        _typed(
            "Which company developed the video game Frost Hollow?",
            ["Frost Hollow is a 2014 adventure game voiced by Lena Moritz and developed by Gantry Studios."],
        )
        == "Gantry Studios"
    )
    # "which actor": neither the quoted title nor the novelist (was "Night Tide").
    assert _typed(
        "Which actor starred in the 1952 film Harbour Lights?",
        ['Harbour Lights is a 1952 crime film adapted from "Night Tide" by the novelist Ida Warne, starring the actor '
         "Declan Ormsby."],
    ) == "Declan Ormsby"  # fmt: skip


def test_a_sentence_defining_a_name_as_the_asked_noun_makes_it_the_answer_not_a_bridge() -> None:
    statements = [
        Statement(1, "Ilse Brandt is a German pianist who recorded the album Night Ferry with Tunde Okoro."),
        Statement(2, "Tunde Okoro is a Nigerian jazz singer born in Lagos."),
    ]
    result = extract_answer(
        question="The pianist Ilse Brandt recorded an album with this jazz singer born in Lagos?", statements=statements
    )
    assert result.short == "Tunde Okoro", result  # was "Night Ferry": Tunde Okoro followed as a bridge


def test_a_yes_no_question_comparing_two_names_joined_by_and_is_answered() -> None:
    statements = [
        Statement(1, "Mira Talbot is a Norwegian painter known for her harbour scenes."),
        Statement(2, "Jonas Eide (born 1950) is a Norwegian painter and printmaker."),
        Statement(3, "Arne Vik is a Norwegian composer."),
    ]
    both = extract_answer(question="Are Mira Talbot and Jonas Eide both painters?", statements=statements)
    assert both.short == "yes", both  # was "": the two names were read as one ("Mira Talbot and Jonas Eide")
    assert extract_answer(question="Are Mira Talbot and Arne Vik both painters?", statements=statements).short == "no"


def test_a_question_of_two_sentences_is_typed_by_its_last() -> None:
    statements = [
        Statement(1, "The painter Mira Talbot was knighted in 2001 and holds the Order of St. Olav."),
        Statement(2, "The painter Jonas Eide has won three national prizes."),
    ]
    result = extract_answer(
        question="The painter Mira Talbot holds the Order of St. Olav. Does the painter Jonas Eide also hold it?",
        statements=statements,
    )
    assert result.short in ("yes", "no"), result  # was "Mira Talbot": the first sentence typed it as a name


def test_a_person_is_named_as_the_evidence_usually_writes_them_not_by_their_full_birth_name() -> None:
    statements = [
        Statement(1, "Odile Margarethe Brannagh (born 4 May 1961) is an Irish engineer who designed the Fenmoor dam."),
        Statement(2, "The Fenmoor dam was opened in 1994; Odile Brannagh attended the ceremony."),
    ]
    result = extract_answer(question="Which Irish engineer designed the Fenmoor dam?", statements=statements)
    assert result.short == "Odile Brannagh", result  # was "Odile Margarethe Brannagh"


def test_who_is_answered_by_a_person_not_a_place_the_ner_takes_for_a_body() -> None:
    """The small NER model types invented places as bodies ("Portleven", "River Tavy"): a name the sentence defines
    as a village, written after "off"/"in"/"near", or the question's own name with a common noun is no "who"."""
    texts = [
        "Portleven is a village at the mouth of the River Tavy. Its reef was first charted by the surveyor Elin Marsh "
        "in 1850.",
        "After a gale in 1848 wrecked two schooners off Gannet Point, the village asked Marsh for a chart that pilots "
        "could trust.",
    ]
    assert (
        _typed("Who drew the first chart of the reef by the mouth of the Tavy?", texts) == "Elin Marsh"
    )  # was "River Tavy"
