"""Text that is text in chat (issue 25): a passage that is mostly non-language stays searchable and is flagged on
its Chunk node, but chat answers do not quote it; glyph runs are cut from the passages they do quote."""

from __future__ import annotations

import pytest

from exograph.chat.evidence import evidence_retrieve
from exograph.core.scope import Scope
from exograph.graphs import store
from exograph.graphs.retrieval import retrieve_for_user
from exograph.graphs.services import graph_create
from tests.core.test_language import FIGURE_GLYPHS, TAX_TABLE

pytestmark = pytest.mark.django_db

PROSE = (
    "The speedup of the tracing compiler over the interpreter is shown for each benchmark program. Programs "
    "that spend most of their time in native code gain the most, while recording costs weigh on the rest."
)
MIXED = '!" #" )*+,-./#0$1$23# )*+45678#0$1923# :,,/==+.>?:6;+<6//=#0!1923# ' + PROSE


def test_nonlanguage_passages_are_searchable_and_flagged_but_not_quoted(alice, write_doc) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Figures", scope=Scope.PRIVATE)
    document_id = write_doc(graph, alice, texts=[FIGURE_GLYPHS, TAX_TABLE, MIXED], entities=[], document_id="doc_fig")
    rows = store.ro_query(graph.store_name, "MATCH (c:Chunk) RETURN c.id, c.nonlanguage")
    flags = {row[0]: row[1] for row in rows}
    assert flags == {f"{document_id}:0": True, f"{document_id}:1": True, f"{document_id}:2": False}

    question = "What speedup does the tracing compiler show over the interpreter (Figure 12)?"
    searched = retrieve_for_user(
        actor=alice, question=question, scope=Scope.PRIVATE, graph_id=graph.id, mode="passages", top_k=12
    )
    assert f"{document_id}:0" in {item.chunk_id for item in searched.items}  # still searchable

    found = evidence_retrieve(actor=alice, question=question, engine="rag", scope=Scope.PRIVATE, graph_id=graph.id)
    quoted = {item["chunk_id"]: item["text"] for item in found.items if item["kind"] == "passage"}
    assert set(quoted) == {f"{document_id}:2"}
    assert quoted[f"{document_id}:2"].endswith(PROSE) and "#" not in quoted[f"{document_id}:2"]
