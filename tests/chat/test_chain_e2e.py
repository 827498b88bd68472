"""End to end: two text documents, each holding half of a chain (A acquired B / B builds C), go through the
real ingest pipeline (REST upload, parse, chunk, embed, offline extraction, graph write); then chat.

Engine `graph` hands the model the connecting relations as explicit facts; engine `rag` hands it passages
only. The extractive answer cites both documents' passages."""

from __future__ import annotations

import re

import pytest

from billing.services import credits_grant_admin
from exograph.chat.models import ChatMessage
from exograph.core.llm.extractive import CHAIN_SURENESS

pytestmark = pytest.mark.django_db

ACQUISITION = "Acme Corporation acquired Borealis Labs in 2019 for an undisclosed sum."
PRODUCT = "Borealis Labs builds the Cygnus Engine at its Oslo plant."
QUESTION = "Who acquired the company that builds the Cygnus Engine?"
MESSAGES = "/api/v1/chat/messages/"


@pytest.fixture
def chain(alice, alice_client, django_capture_on_commit_callbacks):  # type: ignore[no-untyped-def]
    """The two halves uploaded as text documents and processed by the pipeline (eager Celery)."""
    credits_grant_admin(account=alice, amount=200, actor=None, note="tests")
    ids = []
    for title, text in (("Acme news", ACQUISITION), ("Borealis products", PRODUCT)):
        with django_capture_on_commit_callbacks(execute=True):
            response = alice_client.post("/api/v1/documents/", {"text": text, "title": title}, format="json")
        assert response.status_code == 201, response.json()
        ids.append(response.json()["id"])
    for document_id in ids:
        assert alice_client.get(f"/api/v1/documents/{document_id}/").json()["status"] == "processed"
    return ids


def _handed(message_id: str) -> list[dict]:  # type: ignore[type-arg]
    return list(ChatMessage.objects.get(id=message_id).evidence)


def _names(item: dict) -> bool:  # type: ignore[type-arg]
    return "Borealis Labs" in item["text"]


def test_graph_engine_hands_the_model_the_connecting_facts_and_rag_does_not(alice_client, chain, openai_chat):  # type: ignore[no-untyped-def]
    acquisition_doc, product_doc = chain
    openai_chat.queue("Acme Corporation [1].", "Acme Corporation [1].")
    graph = alice_client.post(MESSAGES, {"message": QUESTION, "reasoning_engine": "graph"}, format="json")
    assert graph.status_code == 201, graph.json()
    facts = [i for i in _handed(graph.json()["message_id"]) if i["kind"] in ("fact", "relation")]
    # The chain's two links, each from its own document, reach the model as explicit facts.
    acquired = [f for f in facts if "Acme Corporation" in f["text"] and _names(f)]
    builds = [f for f in facts if "Cygnus" in f["text"] and _names(f)]
    assert acquired and builds, facts
    assert {acquired[0]["document_id"], builds[0]["document_id"]} == {acquisition_doc, product_doc}
    system = openai_chat.bodies[0]["messages"][0]["content"]
    assert re.search(r"^\[\d+\] \(private, (fact|relation)[^)]*\) Acme Corporation \S+ Borealis Labs", system, re.M)
    assert re.search(r"^\[\d+\] \(private, (fact|relation)[^)]*\) Borealis Labs \S+ Cygnus", system, re.M)

    rag = alice_client.post(MESSAGES, {"message": QUESTION, "reasoning_engine": "rag"}, format="json")
    assert rag.status_code == 201, rag.json()
    handed = _handed(rag.json()["message_id"])
    assert handed and {i["kind"] for i in handed} == {"passage"}
    rag_system = openai_chat.bodies[1]["messages"][0]["content"]
    evidence_lines = rag_system.split("Evidence:", 1)[1].strip().splitlines()
    assert len(evidence_lines) == 2 and all(", passage, " in line for line in evidence_lines), evidence_lines


def test_extractive_answer_cites_both_halves_of_the_chain(alice_client, chain):  # type: ignore[no-untyped-def]
    acquisition_doc, product_doc = chain
    body = alice_client.post(MESSAGES, {"message": QUESTION, "reasoning_engine": "graph"}, format="json").json()
    assert "Acme Corporation" in body["answer"] and "Cygnus Engine" in body["answer"]
    cited_docs = {item["document_id"] for item in body["evidence"]}
    assert cited_docs == {acquisition_doc, product_doc}, body["evidence"]
    passages = [item for item in body["evidence"] if item["kind"] == "passage"]
    assert {p["document_id"] for p in passages} == {acquisition_doc, product_doc}, body["evidence"]
    # An answer reached over two links is less sure than one a single sentence gives (CHAIN_SURENESS, issue 26).
    assert body["grounded"] is True and body["support_score"] == CHAIN_SURENESS
    for item in body["evidence"]:
        assert f"[{item['n']}]" in body["answer"]


def test_a_configured_model_is_told_which_items_link_a_paraphrased_chain(alice_client, chain, openai_chat):  # type: ignore[no-untyped-def]
    openai_chat.queue("Acme Corporation [1][2].")
    response = alice_client.post(
        MESSAGES,
        {"message": "Who owns the firm that makes the Cygnus Engine?", "reasoning_engine": "graph"},
        format="json",
    )
    assert response.status_code == 201, response.json()
    system = openai_chat.bodies[0]["messages"][0]["content"]
    numbered = {
        int(n): text for n, text in re.findall(r"^\[(\d+)\] \(private, passage[^)]*\) (.*)$", system, re.MULTILINE)
    }
    linked = re.search(r"^Linked items \(the question's subject to its answer\): (.*)$", system, re.MULTILINE)
    assert linked, system
    links = [int(n) for n in re.findall(r"\[(\d+)\]", linked.group(1))]
    assert {numbered.get(n) for n in links} == {ACQUISITION, PRODUCT}
