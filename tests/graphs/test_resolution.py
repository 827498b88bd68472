"""One node per thing across documents (graphs.services.resolution) and the merge report (graphs.merges)."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from exograph.core.scope import Scope
from exograph.graphs import store
from exograph.graphs.merges import graph_merges_report
from exograph.graphs.services import graph_create
from exograph.graphs.types import entity_id_for

pytestmark = pytest.mark.django_db


def _nodes(graph, key: str) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    rows = store.ro_query(graph.store_name, "MATCH (e:Entity {normalized_name: $k}) RETURN e.name, e.type", {"k": key})
    return sorted((r[0], r[1]) for r in rows)


def test_a_name_the_graph_types_keeps_that_type_in_later_documents(alice, write_doc) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="R", scope=Scope.PRIVATE)
    write_doc(graph, alice, texts=["Lucca is a city in Tuscany."], entities=[("Lucca", "LOCATION", "")])
    # The model read the name as a person in the second passage: it still joins the place's node.
    write_doc(graph, alice, texts=["Guy ruled from Lucca."], entities=[("Lucca", "PERSON", ""), ("Guy", "PERSON", "")])
    write_doc(graph, alice, texts=["Lucca's walls."], entities=[("Lucca", "CONCEPT", "")])
    assert _nodes(graph, "lucca") == [("Lucca", "location")]
    graph.refresh_from_db()
    assert graph.entity_count == 2


def test_a_document_rewritten_alone_may_retype_its_own_node(alice, write_doc) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="R", scope=Scope.PRIVATE)
    write_doc(graph, alice, texts=["Lotharingia."], entities=[("Lotharingia", "CONCEPT", "")], document_id="doc_a")
    write_doc(graph, alice, texts=["Lotharingia."], entities=[("Lotharingia", "LOCATION", "")], document_id="doc_a")
    assert _nodes(graph, "lotharingia") == [("Lotharingia", "location")]


def test_merge_report_lists_merged_forms_per_document_and_names_split_by_type(alice, write_doc) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="R", scope=Scope.PRIVATE)
    # extraction.resolve wrote a plural as its singular ("trace trees" -> "Trace Tree"); case merges in the graph
    write_doc(graph, alice, texts=["Trace trees in TraceMonkey."], entities=[("Trace Tree", "CONCEPT", "")])
    write_doc(graph, alice, texts=["A trace tree again."], entities=[("trace tree", "CONCEPT", "")])
    # a CONCEPT node first, a typed reading later: two nodes until the CONCEPT's document is re-extracted
    write_doc(graph, alice, texts=["Elmham."], entities=[("Elmham", "CONCEPT", "")])
    write_doc(graph, alice, texts=["The see of Elmham."], entities=[("Elmham", "LOCATION", "")])
    report = graph_merges_report(graph=graph)
    merged = {row["name"]: row for row in report["merged"]}
    assert "trace tree" in merged["Trace Tree"]["forms"]
    assert len(merged["Trace Tree"]["documents"]) == 2  # each document's own forms: the merge's provenance
    split = {row["key"]: row for row in report["split"]}
    assert {n["type"] for n in split["elmham"]["nodes"]} == {"concept", "location"}
    assert entity_id_for("Elmham", "LOCATION") in {n["id"] for n in split["elmham"]["nodes"]}
    out = StringIO()
    call_command("graph_merges", graph.id, "--json", stdout=out)
    assert json.loads(out.getvalue()) == report


@pytest.mark.parametrize(
    "first, second", [("the Tidewater Pilots", "Tidewater Pilots"), ("Tidewater Pilots", "The Tidewater Pilots")]
)
def test_a_leading_article_never_makes_a_second_node_in_the_graph_or_the_world_graph(  # type: ignore[no-untyped-def]
    alice, write_doc, first, second
) -> None:
    from exograph.graphs.services.graphs import world_graph

    graph = graph_create(actor=alice, name="R", scope=Scope.WORLD)
    write_doc(graph, alice, texts=[f"{first} guide ships up the estuary."], entities=[(first, "ORGANIZATION", "")])
    write_doc(graph, alice, texts=[f"Ships wait for {second} at dawn."], entities=[(second, "ORGANIZATION", "")])
    for target in (graph, world_graph()):
        rows = store.ro_query(
            target.store_name,
            "MATCH (e:Entity) WHERE e.normalized_name ENDS WITH 'tidewater pilots' "
            "RETURN e.name, e.type, size(e.document_ids), e.aliases",
        )
        assert len(rows) == 1, rows
        assert rows[0][2] == 2 and second in rows[0][3]  # the second document's form is kept: provenance
    assert not [row for row in graph_merges_report(graph=graph)["split"] if "tidewater" in row["key"]]
