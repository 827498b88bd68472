"""Asking what the documents are about (issue 26), offline extractive model, in words of our own: "What is this
document about?", "Summarise the report", "Give me an overview" are answered with the opening sentences of each
document the evidence holds, cited and charged as an answer, never refused for sharing no word with them; "summarise
<a topic>" is a question about that topic, refused when the documents don't cover it."""

from __future__ import annotations

import pytest

from exograph.core.llm.extractive import Statement, extract_answer
from exograph.core.llm.extractive_overview import asks_overview
from exograph.core.scope import Scope
from exograph.graphs.services import graph_create

MESSAGES = "/api/v1/chat/messages/"
GRANT = [
    "Heat pump grants: guidance for householders. The Warmer Homes Fund pays up to 7,500 pounds towards an "
    "air-source heat pump for owner-occupied homes in the county.",
    "Applications open on 1 February 2027 and close when the fund is spent.",
]
FERRY = "The Skerry ferry crosses to Holm Island four times a day. Tickets are sold on board."


@pytest.mark.parametrize(
    ("question", "overview"),
    [
        ("What is this document about?", True),
        ("Can you summarize the report?", True),
        ("Give me a quick overview of my files", True),
        ("What are the main points?", True),
        ("what's the leaflet all about", True),
        ("Summarise the 2018 World Cup final", False),
        ("What is the fund about?", False),
        ("Who wrote the report?", False),
    ],
)
def test_an_overview_is_asked_of_the_documents_not_of_a_topic(question, overview):
    assert asks_overview(question) is overview


def test_the_overview_opens_each_document_and_cites_it():
    statements = [
        Statement(1, GRANT[0], "passage", "grants.txt"),
        Statement(2, "Fund related to County", "fact", "grants.txt"),
        Statement(3, FERRY, "passage", "ferry.txt"),
        Statement(4, GRANT[1], "passage", "grants.txt"),
    ]
    got = extract_answer(question="What are these documents about?", statements=statements)
    assert got.answered and got.relevance == 1.0
    assert got.text == (
        "Heat pump grants: guidance for householders [1]. The Warmer Homes Fund pays up to 7,500 pounds towards an "
        "air-source heat pump for owner-occupied homes in the county [1]. The Skerry ferry crosses to Holm Island "
        "four times a day [3]. Tickets are sold on board [3]."
    )


@pytest.fixture
def grant_graph(alice, write_doc):  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Household", scope=Scope.PRIVATE)
    write_doc(graph, alice, texts=GRANT, entities=[("Warmer Homes Fund", "organization", "")], filename="grants.txt")
    return graph


@pytest.mark.parametrize("engine", ["graph", "rag"])
def test_what_is_this_document_about_is_answered_grounded_and_charged(alice, alice_client, grant_graph, fund, engine):  # type: ignore[no-untyped-def]
    fund(alice, 10)
    body = alice_client.post(
        MESSAGES, {"message": "What is this document about?", "reasoning_engine": engine}, format="json"
    ).json()
    assert body["answered"] is True and body["grounded"] is True, body["answer"]
    assert "Warmer Homes Fund" in body["answer"] and "[1]" in body["answer"]
    assert body["credits_charged"] == 3


def test_summarising_a_topic_the_documents_lack_is_refused(alice, alice_client, grant_graph, fund):  # type: ignore[no-untyped-def]
    fund(alice, 10)
    body = alice_client.post(
        MESSAGES, {"message": "Summarise the 2018 World Cup final", "reasoning_engine": "rag"}, format="json"
    ).json()
    assert body["answered"] is False and body["credits_charged"] == 0, body["answer"]
