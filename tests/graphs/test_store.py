from __future__ import annotations

import math

import pytest

from exograph.core.errors import ValidationError
from exograph.core.falkor import falkordb_client
from exograph.graphs import store
from exograph.graphs.types import entity_id_for, normalize_name, normalize_type


def test_params_accept_plain_values_and_strip_nul() -> None:
    assert store.params(a="x\x00y", b=[1, 2.5, True, None, {"k": "v\x00"}]) == {
        "a": "xy",
        "b": [1, 2.5, True, None, {"k": "v"}],
    }


@pytest.mark.parametrize("bad", [object(), b"bytes", {1, 2}, math.nan, math.inf, [math.inf], {"k": object()}])
def test_params_reject_other_types_and_non_finite(bad: object) -> None:
    with pytest.raises(ValidationError):
        store.params(value=bad)


@pytest.mark.parametrize(
    "bad", [[0.5, math.nan], [1e308, 1e308, math.inf], (0.1, -math.inf), {"rows": [{"embedding": [0.2, math.nan]}]}]
)
def test_params_reject_a_non_finite_float_inside_a_vector(bad: object) -> None:
    with pytest.raises(ValidationError):
        store.params(value=bad)


def test_the_params_header_is_the_one_falkordbs_client_writes() -> None:
    """Embeddings are written at C speed (store.core._render); every value still reaches FalkorDB as the client's own
    `CYPHER name=value` header would write it."""
    from falkordb import Graph

    from exograph.graphs.store.core import _header

    vector = [0.1, -0.0, 1e-07, -3.5, 1e20, 0.30000000000000004]
    values = {
        "text": 'a "quoted" \\ back\\slash',
        "empty": "",
        "none": None,
        "flags": [True, False],
        "mixed": [1, 2.5, "x", None],
        "vector": vector,
        "vectors": [vector, tuple(vector)],
        "rows": [{"id": "e1", "embedding": vector, "names": ["a", "b"], "meta": {"n": 3, "w": 0.25}}],
        "big": 10**18,
    }
    clean = store.params(values)
    assert clean["vector"] == vector and clean["rows"][0]["embedding"] == vector
    assert _header(clean) == Graph._build_params_header(None, clean)  # type: ignore[arg-type]
    assert _header(None) == "" and _header({}) == ""
    with pytest.raises(ValidationError):
        _header({"not an identifier": 1})


def test_params_reject_odd_dict_keys() -> None:
    with pytest.raises(ValidationError):
        store.params(value={"a b": 1})


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("uses", "USES"),
        ("is type of", "IS_TYPE_OF"),
        ("part-of", "PART_OF"),
        ("') RETURN 1 //", "RELATED_TO"),
        ("`x`", "RELATED_TO"),
        ("MENTIONS", "RELATED_TO"),
        ("a" * 80, "RELATED_TO"),
        ("über", "RELATED_TO"),
        ("", "RELATED_TO"),
    ],
)
def test_relation_type_normaliser(raw: str, expected: str) -> None:
    assert store.relation_type(raw) == expected


def test_label_allowlist() -> None:
    assert store.label("Entity") == "Entity"
    with pytest.raises(ValidationError):
        store.label("Entity) DETACH DELETE (n")


@pytest.mark.parametrize(
    "text", ["') RETURN 1 //", "`x`", "$param", "@name:{foo}", "~x %y% -z", "*", "a|b", '宇宙")|@t:{塵*}', "한국(어)"]
)
def test_fulltext_query_never_carries_operators(text: str) -> None:
    query = store.fulltext_query(text)
    for part in filter(None, query.split("|")):
        # a word, or the quoted phrase of a CJK run's bigrams
        words = part[1:-1].split(" ") if part.startswith('"') and part.endswith('"') else [part]
        assert all(word.isalnum() for word in words), query


def test_normalisation_folds_case_accents_and_space() -> None:
    assert normalize_name("  Café   Société ") == "cafe societe"
    assert normalize_type(" Named  Entity ") == "named_entity"
    assert entity_id_for("CAFÉ", "Place") == entity_id_for("cafe", "place")
    assert entity_id_for("cafe", "place") != entity_id_for("cafe", "person")


def test_store_ensure_is_idempotent_and_records_dimension(db) -> None:  # type: ignore[no-untyped-def]
    name = "exo:test_store_ensure"
    try:
        store.store_ensure(name, dimension=8)
        store._ensured.clear()
        store.store_ensure(name, dimension=8)
        assert store.store_vector_dimension(name) == 8
    finally:
        store.store_drop(name)
    store.store_drop(name)  # dropping a missing store is fine


def test_user_text_in_fulltext_search_is_just_text(db) -> None:  # type: ignore[no-untyped-def]
    name = "exo:test_store_text"
    try:
        store.store_ensure(name, dimension=3)
        for text in ["') RETURN 1 //", "`x`", "$param", "@a:b", "((", '"quoted"']:
            lists = store.store_search_lists(name, text_query=store.fulltext_query(text), vector=[1.0, 0, 0], k=5)
            assert all(value == [] for value in lists.values())
    finally:
        store.store_drop(name)


def test_reads_of_a_store_nobody_wrote_are_empty(db) -> None:  # type: ignore[no-untyped-def]
    assert store.ro_query("exo:never_written", "MATCH (n) RETURN n") == []


def test_alias_lookups_read_the_alias_index(db) -> None:  # type: ignore[no-untyped-def]
    name = "exo:test_store_alias_index"
    try:
        store.store_ensure(name, dimension=3)
        entities = [
            {
                "id": entity_id_for(entity, "concept"),
                "name": entity,
                "key": normalize_name(entity),
                "alias_keys": [normalize_name(alias) for alias in aliases],
                "type": "concept",
                "description": "",
                "aliases": list(aliases),
                "vkey": store.vector_key(entity_id_for(entity, "concept"), [1.0, 0.0, 0.0]),
                "embedding": [1.0, 0.0, 0.0],
            }
            for entity, aliases in [("Graph Neural Network", ("GNN", "graph net")), ("Transformer", ())]
        ]
        store.store_document_write(
            name,
            document_id="doc_alias",
            filename="a.pdf",
            contributor_id=1,
            chunks=[],
            entities=entities,
            mentions=[],
            relations={},
        )
        gnn = entity_id_for("Graph Neural Network", "concept")
        assert store.store_entity_find(name, entity_id="GNN", key="gnn") == gnn
        assert store.store_entity_find(name, entity_id="nope", key="nope") is None
        assert store.store_entity_key_hits(name, keys=["graph net", "transformer", "nope"], limit=5) == [
            entity_id_for("Transformer", "concept"),
            gnn,
        ]
        # Both alias statements are index scans, not a scan of every entity.
        graph = falkordb_client().select_graph(name)
        for statement, values in [
            (store.reads.ALIAS_FIND, {"key": "gnn"}),
            (store.reads.ALIAS_HITS, {"keys": ["gnn"], "limit": 5}),
        ]:
            plan = str(graph.explain(statement, values))
            assert "Node By Index Scan" in plan and "Label Scan" not in plan, plan
    finally:
        store.store_drop(name)
