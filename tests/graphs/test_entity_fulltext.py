"""Entities by full text over names (store.reads._entity_text_hits, issue 29): a query with a common word must
not make FalkorDB hand over and sort every name that word matches (the World Graph's search grew with its size),
and the names that match more of the query, or spell it out, still come first."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from exograph.core.falkor import falkordb_client
from exograph.graphs import store
from exograph.graphs.store import reads
from exograph.graphs.store.core import _header
from exograph.graphs.types import entity_id_for, normalize_name

pytestmark = pytest.mark.django_db

NAME = "exo:test_entity_fulltext"
# 40 names with "harbour" (the common word once COMMON_TERM is 8), 12 of them with "lighthouse" too (common as
# well); "Kestrel" is in two names only.
SHIPS = [f"Vessel{i} harbour" for i in range(24)]
LIGHTS = [f"Beacon{i} lighthouse harbour" for i in range(12)]
NAMES = [
    *SHIPS,
    *LIGHTS,
    "Harbour Lighthouse",
    "Kestrel Point",
    "Kestrel harbour pilot",
    "Gull lighthouse",
    "Tern lighthouse",
    "Heron lighthouse",
    "Osprey lighthouse",
    "Plover lighthouse",
    "Lone harbour ferry",
    "Old harbour crane",
    "North harbour wall",
]


def _entity(name: str) -> dict[str, Any]:
    entity_id = entity_id_for(name, "place")
    return {
        "id": entity_id,
        "name": name,
        "key": normalize_name(name),
        "alias_keys": [],
        "type": "place",
        "description": "",
        "aliases": [],
        "vkey": store.vector_key(entity_id, [1.0, 0.0, 0.0]),
        "embedding": [1.0, 0.0, 0.0],
    }


@pytest.fixture
def names_graph(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setattr(reads, "COMMON_TERM", 8)
    store.store_ensure(NAME, dimension=3)
    store.store_document_write(
        NAME,
        document_id="doc_names",
        filename="names.pdf",
        contributor_id=1,
        chunks=[],
        entities=[_entity(name) for name in NAMES],
        mentions=[],
        relations={},
    )
    try:
        yield NAME
    finally:
        store.store_drop(NAME)


def _names(hits: list[tuple[str, float]]) -> list[str]:
    by_id = {entity_id_for(name, "place"): name for name in NAMES}
    return [by_id[entity_id] for entity_id, _ in hits]


def _nodes_handed_over(monkeypatch: pytest.MonkeyPatch, name: str, text: str, k: int) -> tuple[list[str], int]:
    """The names found, and how many index matches the search's reads handed to Cypher (GRAPH.PROFILE of each
    statement it sent: the ProcedureCall operations' records)."""
    sent: list[tuple[str, dict[str, Any]]] = []
    original = reads.ro_query

    def recording(store_name: str, cypher: str, values: Any = None) -> Any:
        sent.append((cypher, dict(values or {})))
        return original(store_name, cypher, values)

    monkeypatch.setattr(reads, "ro_query", recording)
    found = _names(reads._entity_text_hits(name, store.fulltext_query(text), k))
    monkeypatch.setattr(reads, "ro_query", original)
    handed = 0
    for cypher, values in sent:
        profile = falkordb_client().connection.execute_command(
            "GRAPH.PROFILE", name, _header(store.params(values)) + cypher
        )
        for line in profile:
            text_line = line.decode() if isinstance(line, bytes) else str(line)
            if "ProcedureCall" in text_line:
                handed += int(text_line.split("Records produced: ")[1].split(",")[0])
    return found, handed


def test_a_common_word_is_not_read_whole(names_graph: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """'harbour' matches 43 names and 'lighthouse' 20; the old single OR query handed all 51 matches over."""
    found, handed = _nodes_handed_over(monkeypatch, names_graph, "the harbour lighthouse", k=5)
    assert found[0] == "Harbour Lighthouse"  # the name spelled out
    assert set(found[1:]) <= {f"Beacon{i} lighthouse harbour" for i in range(12)}  # both words before one
    assert handed < 40, handed

    found, handed = _nodes_handed_over(monkeypatch, names_graph, "harbour", k=5)
    assert len(found) == 5 and all("harbour" in name.casefold() for name in found)
    assert handed <= 2 * (reads.COMMON_TERM + 1), handed


def test_a_rare_word_beside_a_common_one_finds_all_its_names(names_graph: str) -> None:
    found = _names(reads._entity_text_hits(names_graph, store.fulltext_query("Kestrel harbour pilots"), 3))
    assert set(found[:2]) == {"Kestrel Point", "Kestrel harbour pilot"}, found
    assert found[0] == "Kestrel harbour pilot"  # it matches more of the query


def test_a_query_of_rare_words_is_the_plain_or_query(names_graph: str) -> None:
    """Below COMMON_TERM nothing changes: the same hits, scores and order as the single OR query."""
    for text in ("Kestrel gull", "Osprey plover tern heron", "kestrel"):
        query = store.fulltext_query(text)
        assert reads._entity_text_hits(names_graph, query, 10) == reads._entity_text(names_graph, query, 10)


def test_words_that_match_no_name_find_nothing(names_graph: str) -> None:
    assert reads._entity_text_hits(names_graph, store.fulltext_query("albatross cormorant"), 5) == []
    assert reads._entity_text_hits(names_graph, "", 5) == []
