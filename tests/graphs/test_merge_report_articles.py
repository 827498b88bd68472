"""The merge report's split list joins a node written with a leading article before resolution dropped it (issue
25): the owner sees "The Harbour Board" and "Harbour Board" side by side, to join them."""

from __future__ import annotations

import pytest

from exograph.core.scope import Scope
from exograph.graphs import store
from exograph.graphs.merges import graph_merges_report
from exograph.graphs.services import graph_create

pytestmark = pytest.mark.django_db


def test_an_old_node_under_its_article_is_reported_beside_the_bare_name(alice, write_doc) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Ports", scope=Scope.PRIVATE)
    write_doc(
        graph, alice, texts=["Quay fees are set by Harbour Board."], entities=[("Harbour Board", "ORGANIZATION", "")]
    )
    # a node an earlier extraction wrote with its article in the key (the graph's nodes before 0b0c8d6)
    store.query(
        graph.store_name,
        "CREATE (:Entity {id: 'ent_old_article', name: 'The Harbour Board', type: 'organization', "
        "normalized_name: 'the harbour board', document_ids: ['doc_old']})",
    )
    split = {row["key"]: row for row in graph_merges_report(graph=graph)["split"]}
    assert {n["name"] for n in split["harbour board"]["nodes"]} == {"The Harbour Board", "Harbour Board"}
    assert "the harbour board" not in split
