"""POST /api/v1/graphs/{id}/import/: triples (JSONL, CSV) or a graph's own export into a private graph, validated
row by row before anything is charged or written, priced per started 1,000 rows, entities resolved against the
graph, facts searchable and cited by graph-mode chat with their source; export -> import -> export round-trips."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest

from billing.services import credit_balance, credits_grant_admin
from exograph.core.errors import ServiceUnavailable
from exograph.core.scope import Scope
from exograph.graphs import store
from exograph.graphs.models import Graph
from exograph.graphs.services import graph_create
from exograph.graphs.services import imports as imports_module
from tests.graphs.conftest import QUANTUM_ENTITIES, QUANTUM_RELATIONS, QUANTUM_TEXTS

pytestmark = pytest.mark.django_db

TRIPLES = [
    {
        "subject": "Ada Lovelace",
        "predicate": "wrote",
        "object": "Note G",
        "source": "Sketch of the Analytical Engine (1843)",
        "evidence": "Ada Lovelace wrote Note G, the first published computer program, in 1843.",
        "subject_type": "person",
    },
    {"subject": "Note G", "predicate": "computes", "object": "Bernoulli numbers"},
    {
        "subject": "Charles Babbage",
        "predicate": "designed",
        "object": "Analytical Engine",
        "source": "https://example.org/babbage",
    },
]


def _jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def _import(client, graph_id: str, content: str, fmt: str = "jsonl", **extra: Any):  # type: ignore[no-untyped-def]
    return client.post(
        f"/api/v1/graphs/{graph_id}/import/", {"format": fmt, "content": content, **extra}, format="json"
    )


def _export(client, graph_id: str, fmt: str = "jsonl") -> str:  # type: ignore[no-untyped-def]
    response = client.get(f"/api/v1/graphs/{graph_id}/export/", {"format": fmt})
    assert response.status_code == 200
    return b"".join(response.streaming_content).decode("utf-8")


def _shape(jsonl: str) -> tuple[set[tuple[str, str, str]], set[tuple[str, str, str]]]:
    """(entities as (id, name, type), relations as (source name, type, target name)) of a jsonl export."""
    records = [json.loads(line) for line in jsonl.splitlines()]
    entities = {r["id"]: (r["id"], r["name"], r["type"]) for r in records if r["record"] == "entity"}
    relations = {
        (entities[r["source"]][1], r["type"], entities[r["target"]][1]) for r in records if r["record"] == "relation"
    }
    return set(entities.values()), relations


@pytest.fixture
def notes(alice) -> Graph:  # type: ignore[no-untyped-def]
    credits_grant_admin(account=alice, amount=100, actor=None, note="import tests")
    return graph_create(actor=alice, name="Imported notes", scope=Scope.PRIVATE)


def test_jsonl_triples_are_charged_per_thousand_rows_and_become_typed_relations_with_their_source(
    alice, alice_client, notes
) -> None:  # type: ignore[no-untyped-def]
    quote = _import(alice_client, notes.id, _jsonl(TRIPLES), dry_run=True)
    assert quote.status_code == 200, quote.json()
    assert quote.json()["credits_needed"] == 5 and quote.json()["covered"] and quote.json()["triples"] == 3
    assert credit_balance(account=alice) == 100 and store.store_counts(notes.store_name)["relations"] == 0

    response = _import(alice_client, notes.id, _jsonl(TRIPLES))
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["triples"] == 3 and body["entities"] == 5 and body["entities_joined"] == 0
    assert body["documents_written"] == 3  # three sources: the book, the URL, and the rows without a source
    assert body["credits_charged"] == 5 and body["balance"] == 95 == credit_balance(account=alice)

    entities, relations = _shape(_export(alice_client, notes.id))
    assert relations == {
        ("Ada Lovelace", "WROTE", "Note G"),
        ("Note G", "COMPUTES", "Bernoulli numbers"),
        ("Charles Babbage", "DESIGNED", "Analytical Engine"),
    }
    assert ("person", "Ada Lovelace") in {(kind, name) for _, name, kind in entities}
    records = [json.loads(line) for line in _export(alice_client, notes.id).splitlines()]
    documents = {r["title"]: r for r in records if r["record"] == "document"}
    assert set(documents) == {"Sketch of the Analytical Engine (1843)", "https://example.org/babbage", "Imported facts"}
    assert documents["https://example.org/babbage"]["source_url"] == "https://example.org/babbage"
    passages = {r["text"] for r in records if r["record"] == "passage"}
    assert TRIPLES[0]["evidence"] in passages and "Note G computes Bernoulli numbers." in passages

    # The same rows again: nothing new is written (still charged: it is a request like any other).
    again = _import(alice_client, notes.id, _jsonl(TRIPLES)).json()
    assert again["documents_written"] == 0 and again["documents_unchanged"] == 3
    assert _shape(_export(alice_client, notes.id))[1] == relations


def test_1001_rows_cost_two_units(alice_client, notes) -> None:  # type: ignore[no-untyped-def]
    rows = [{"subject": f"Thing {i}", "predicate": "follows", "object": f"Thing {i + 1}"} for i in range(1001)]
    quote = _import(alice_client, notes.id, _jsonl(rows), dry_run=True).json()
    assert quote["rows"] == 1001 and quote["credits_needed"] == 10


def test_a_batch_without_its_format_or_with_another_is_told_the_two_it_takes(alice_client, notes) -> None:  # type: ignore[no-untyped-def]
    url = f"/api/v1/graphs/{notes.id}/import/"
    missing = alice_client.post(url, {"content": "subject,predicate,object\nAda,wrote,Note G\n"}, format="json")
    other = alice_client.post(url, {"format": "xlsx", "content": "x"}, format="json")
    for response in (missing, other):
        assert response.status_code == 400
        assert "'jsonl' or 'csv'" in response.json()["error"]["message"], response.json()


def test_a_batch_past_10000_rows_is_refused_at_its_first_extra_row(alice_client, notes) -> None:  # type: ignore[no-untyped-def]
    rows = [{"subject": f"Thing {i}", "predicate": "follows", "object": f"Thing {i + 1}"} for i in range(10_001)]
    error = _import(alice_client, notes.id, _jsonl(rows), dry_run=True).json()["error"]
    assert error["code"] == "invalid_import_row" and error["line"] == 10_001 and "10,000 rows" in error["message"]


def test_a_bad_row_refuses_the_batch_with_its_line_and_writes_nothing(alice, alice_client, notes) -> None:  # type: ignore[no-untyped-def]
    lines = _jsonl(TRIPLES[:2]) + "\n" + json.dumps({"subject": "X", "predicate": "", "object": "Y"}) + "\n"
    response = _import(alice_client, notes.id, lines)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid_import_row" and error["line"] == 4 and error["field"] == "predicate"
    assert error["message"].startswith("Line 4:")
    bad_csv = "subject,predicate,object\nAda,wrote,Note G\nAda,,Note H\n"
    error = _import(alice_client, notes.id, bad_csv, fmt="csv").json()["error"]
    assert error["line"] == 3 and error["field"] == "predicate"
    unknown = _import(alice_client, notes.id, "subject,verb,object\nA,b,C\n", fmt="csv").json()["error"]
    assert unknown["line"] == 1 and "verb" in unknown["message"]
    not_json = _import(alice_client, notes.id, _jsonl(TRIPLES[:1]) + "{oops\n").json()["error"]
    assert not_json["line"] == 2
    assert credit_balance(account=alice) == 100
    counts = store.store_counts(notes.store_name)
    assert counts["entities"] == counts["relations"] == counts["documents"] == 0


def test_a_failed_write_removes_what_the_import_wrote_and_refunds(alice, alice_client, notes, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    real = imports_module.graph_document_write
    calls = []

    def second_fails(**kwargs: Any) -> None:
        calls.append(kwargs["document_id"])
        if len(calls) == 2:
            raise ServiceUnavailable("The graph store (FalkorDB) is unreachable.", code="graph_store_unavailable")
        real(**kwargs)

    monkeypatch.setattr(imports_module, "graph_document_write", second_fails)
    response = _import(alice_client, notes.id, _jsonl(TRIPLES))
    assert response.status_code == 503
    assert len(calls) == 2 and credit_balance(account=alice) == 100
    counts = store.store_counts(notes.store_name)
    assert counts["entities"] == counts["relations"] == counts["documents"] == 0


def test_csv_triples_resolve_against_the_entities_the_graph_holds(alice_client, notes, write_doc, alice) -> None:  # type: ignore[no-untyped-def]
    write_doc(notes, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES, relations=QUANTUM_RELATIONS)
    before = store.store_counts(notes.store_name)["entities"]
    table = io.StringIO()
    writer = csv.writer(table)
    writer.writerow(["subject", "predicate", "object", "evidence"])
    writer.writerow(
        ["quantum computing", "threatens", "RSA", "Quantum computing threatens RSA through Shor's algorithm."]
    )
    writer.writerow(["QUBIT", "is made of", "superconducting circuits", ""])
    body = _import(alice_client, notes.id, table.getvalue(), fmt="csv").json()
    assert body["entities"] == 4 and body["entities_joined"] == 2  # 'quantum computing' and 'QUBIT' were there
    assert store.store_counts(notes.store_name)["entities"] == before + 2
    entities, relations = _shape(_export(alice_client, notes.id))
    assert ("Quantum computing", "THREATENS", "RSA") in relations
    assert ("Qubit", "IS_MADE_OF", "superconducting circuits") in relations
    assert sum(1 for _, name, _ in entities if name.casefold() == "qubit") == 1


def test_imported_facts_are_searched_and_cited_by_graph_mode_chat(alice_client, notes) -> None:  # type: ignore[no-untyped-def]
    _import(alice_client, notes.id, _jsonl(TRIPLES))
    found = alice_client.get("/api/v1/entities/search", {"query": "Ada Lovelace", "graph_id": notes.id}).json()
    assert found["results"] and found["results"][0]["name"] == "Ada Lovelace"
    answer = alice_client.post(
        "/api/v1/chat/messages/",
        {"message": "What did Ada Lovelace write?", "graph_id": notes.id, "reasoning_engine": "graph"},
        format="json",
    )
    assert answer.status_code == 201, answer.json()
    considered = answer.json()["considered"]
    cited = [e for e in considered if e["source"] == "Sketch of the Analytical Engine (1843)"]
    assert cited and any("Note G" in e["text"] for e in cited)
    assert "Note G" in answer.json()["answer"]


def test_export_import_export_round_trips_entities_and_relations(alice, alice_client, write_doc) -> None:  # type: ignore[no-untyped-def]
    credits_grant_admin(account=alice, amount=100, actor=None, note="import tests")
    first = graph_create(actor=alice, name="Quantum", scope=Scope.PRIVATE)
    write_doc(first, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES, relations=QUANTUM_RELATIONS)
    exported = _export(alice_client, first.id)
    for fmt in ("jsonl", "csv"):
        empty = graph_create(actor=alice, name=f"Copy {fmt}", scope=Scope.PRIVATE)
        response = _import(
            alice_client, empty.id, exported if fmt == "jsonl" else _export(alice_client, first.id, "csv"), fmt=fmt
        )
        assert response.status_code == 201, response.json()
        assert _shape(_export(alice_client, empty.id)) == _shape(exported), fmt
    entities, relations = _shape(exported)
    assert len(entities) == len(QUANTUM_ENTITIES) and len(relations) == len(QUANTUM_RELATIONS)


def test_only_a_private_graph_of_ones_own_takes_an_import(alice, bob_client, alice_client) -> None:  # type: ignore[no-untyped-def]
    shared = graph_create(actor=alice, name="Shared", scope=Scope.WORLD)
    private = graph_create(actor=alice, name="Mine", scope=Scope.PRIVATE)
    assert _import(alice_client, shared.id, _jsonl(TRIPLES)).json()["error"]["code"] == "graph_not_private"
    assert _import(bob_client, private.id, _jsonl(TRIPLES)).status_code == 404
