"""A research session ingests the documents it reads as documents of its own graph: the same sentences come back
under other chunk ids, cut at other places and without the section heading line. A world question shows each text
once; a passage with a sentence of its own is kept even when it shares another with one already shown."""

from __future__ import annotations

import re

import pytest

from exograph.core.scope import Scope
from exograph.graphs.models import GraphKind
from exograph.graphs.services import graph_create, world_graph

pytestmark = pytest.mark.django_db

RETRIEVE = "/api/v1/retrieve/"
RULES = [
    "Wrekin Wheelers rules\n\nRides\n\nRiders meet at the Buckatree car park at nine on Sundays. The club ride keeps "
    "to thirty kilometres an hour on the flat. Nobody is left behind on the climb to the Wrekin summit.",
    "Rides\n\nNobody is left behind on the climb to the Wrekin summit. Lights are required on club rides from "
    "October to March. Mudguards are required on winter club rides.",
    "Membership\n\nMembership of the Wrekin Wheelers costs twenty pounds a year. Members buy the club jersey at a "
    "discount. The committee meets on the first Tuesday of each month.",
]
# What the session's read stores: the passages above joined, re-cut by the chunker as one plain text.
COPY = [
    "Wrekin Wheelers rules\n\nRides\n\nRiders meet at the Buckatree car park at nine on Sundays. The club ride keeps "
    "to thirty kilometres an hour on the flat.",
    "Nobody is left behind on the climb to the Wrekin summit.\n\nRides\n\nNobody is left behind on the climb to the "
    "Wrekin summit. Lights are required on club rides from October to March. Mudguards are required on winter club",
    "Mudguards are required on winter club rides.\n\nMembership\n\nMembership of the Wrekin Wheelers costs twenty "
    "pounds a year. Members buy the club jersey at a discount.",
    "The committee meets on the first Tuesday of each month.",
]
STRIDERS = [
    "Riders meet at the Buckatree car park at nine on Sundays. The Severn Striders run from the same car park on "
    "Saturday mornings."
]
ENTITIES = [("Wrekin Wheelers", "organization", "A cycling club."), ("Buckatree", "location", "")]


def _sentences(text: str) -> list[str]:
    return [" ".join(s.split()) for s in re.split(r"(?<=\.)\s+|\n\n", text) if len(s.split()) >= 4]


def test_a_research_copy_of_a_world_document_is_not_shown_again(alice, alice_client, write_doc):  # type: ignore[no-untyped-def]
    research = graph_create(actor=alice, name="My world research", scope=Scope.WORLD, kind=GraphKind.RESEARCH)
    write_doc(world_graph(), alice, texts=RULES, entities=ENTITIES, document_id="doc_rules")
    write_doc(world_graph(), alice, texts=STRIDERS, entities=ENTITIES, document_id="doc_striders")
    for graph in (research, world_graph()):  # a world session's graph is merged into the World Graph too
        write_doc(graph, alice, texts=COPY, entities=ENTITIES, document_id="doc_rules_read")
    payload = {"question": "When do Wrekin Wheelers riders meet?", "graph_scope": "world", "mode": "rag", "top_k": 10}
    body = alice_client.post(RETRIEVE, payload, format="json").json()
    shown = [item["text"] for item in body["items"] if item["kind"] == "passage"]
    for index, text in enumerate(shown):
        before = " ".join(" ".join(shown[:index]).split())
        assert not all(sentence in before for sentence in _sentences(text)), (index, shown)
    joined = " ".join(" ".join(shown).split())
    missing = [sentence for text in RULES + STRIDERS for sentence in _sentences(text) if sentence not in joined]
    assert not missing, missing  # every sentence is still shown, once
    assert any("Severn Striders" in text for text in shown)  # one sentence shared, one of its own: kept


def test_the_document_itself_is_cited_over_a_research_copy_that_ranks_first(alice, alice_client, write_doc):  # type: ignore[no-untyped-def]
    """The copy says the same words, so it ties with the original and its chunk id sorts first: the original is
    cited all the same (research finds its sources by this read and skips its own copies)."""
    notes = graph_create(actor=alice, name="Club notes", scope=Scope.WORLD)
    research = graph_create(actor=alice, name="My world research", scope=Scope.WORLD, kind=GraphKind.RESEARCH)
    write_doc(notes, alice, texts=RULES, entities=ENTITIES, document_id="doc_rules")
    write_doc(research, alice, texts=RULES, entities=ENTITIES, document_id="a_research_copy")
    payload = {"question": "When do Wrekin Wheelers riders meet?", "graph_scope": "world", "mode": "rag", "top_k": 3}
    body = alice_client.post(RETRIEVE, payload, format="json").json()
    passages = [item for item in body["items"] if item["kind"] == "passage"]
    assert len(passages) == 3 and {item["document_id"] for item in passages} == {"doc_rules"}, passages
