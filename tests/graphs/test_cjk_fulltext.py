"""Full-text search of CJK text (issue 14 item 2) on real FalkorDB: chunks and entities carry a
character-bigram copy (`terms`) and the query builder asks for the same bigrams."""

from __future__ import annotations

import base64
import io

import pytest
from django.core.management import call_command

from billing.services import credits_grant_admin
from exograph.core.scope import Scope
from exograph.documents.models import Document
from exograph.graphs import store
from exograph.graphs.retrieval import retrieve
from exograph.graphs.services import graph_create
from exograph.graphs.store.cjk import cjk_terms
from exograph.graphs.types import entity_id_for
from tests.documents.conftest import fixture_bytes
from tests.factories import search_entities

pytestmark = pytest.mark.django_db

JAPANESE = "宇宙塵をたべ、すきとほつた空気をのんで、わたくしはみんなの幸福をねがひます。"
CHINESE = "全文检索引擎把中文句子切分成词语，然后建立倒排索引。"
KOREAN = "한국어 형태소 분석기는 검색엔진의 색인을 만든다."
ENGLISH = "FalkorDB stores the knowledge graph and answers Cypher queries quickly."
OTHER = "Cosmic rays reach the upper atmosphere of the planet."


def _chunk_ids(name: str, text: str) -> list[str]:
    return [chunk_id for chunk_id, _ in store.store_chunk_text_hits(name, text_query=store.fulltext_query(text), k=10)]


def test_terms_are_the_bigrams_of_cjk_runs_only() -> None:
    assert cjk_terms("宇宙塵は空気") == "宇宙 宙塵 塵は は空 空気"
    assert cjk_terms("FalkorDB 宇宙塵 and 한국어") == "宇宙 宙塵 한국 국어"
    assert cjk_terms("塵 x") == "塵"
    assert cjk_terms("ｶﾀｶﾅ") == "カタ タカ カナ"  # halfwidth katakana folded (NFKC)
    assert cjk_terms(ENGLISH) == ""


def test_query_builder_turns_a_cjk_run_into_its_bigram_phrase_and_bigrams() -> None:
    assert store.fulltext_query("FalkorDB 宇宙塵") == 'falkordb|宇宙塵|"宇宙 宙塵"|宇宙|宙塵'
    assert store.fulltext_query("空気") == "空気"
    assert store.fulltext_query("What is cosmic dust?") == "cosmic|dust"  # English as before
    assert len(store.fulltext_query("宇宙塵をたべすきとほつた空気をのんでわたくしはみんなの").split("|")) == 16


def test_japanese_chinese_korean_and_mixed_terms_are_found_by_full_text(alice, write_doc) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="CJK", scope=Scope.PRIVATE)
    document = write_doc(
        graph,
        alice,
        texts=[JAPANESE, CHINESE, KOREAN, ENGLISH, OTHER],
        entities=[
            ("宇宙塵", "concept", "宇宙空間に漂う微粒子"),
            ("倒排索引", "concept", "全文检索的数据结构"),
            ("형태소 분석기", "tool", "한국어 검색"),
            ("FalkorDB", "product", "A graph database"),
        ],
    )
    name = graph.store_name
    japanese, chinese, korean, english, other = (f"{document}:{i}" for i in range(5))
    assert _chunk_ids(name, "宇宙塵") == [japanese]
    assert _chunk_ids(name, "空気") == [japanese]  # inside a run: no token of its own
    # why `terms` exists: RediSearch's default tokenizer keeps a CJK run as one token
    by_text = "CALL db.idx.fulltext.queryNodes('Chunk', $q) YIELD node RETURN node.id"
    assert store.ro_query(name, by_text, {"q": "@text:空気"}) == []
    assert store.ro_query(name, by_text, {"q": "@terms:空気"}) == [[japanese]]
    assert _chunk_ids(name, "倒排索引") == [chinese]
    assert _chunk_ids(name, "분석기") == [korean]
    assert _chunk_ids(name, "검색엔진") == [korean]
    mixed = _chunk_ids(name, "FalkorDB 宇宙塵")
    assert set(mixed) == {japanese, english}
    assert _chunk_ids(name, "FalkorDB knowledge graph") == [english]  # English unchanged
    assert other not in _chunk_ids(name, "宇宙塵 空気")

    entities = store.store_search_text_lists(name, text_query=store.fulltext_query("宇宙塵"), k=10, chunks=False)
    assert [hit[0] for hit in entities["entity_text"]][:1] == [entity_id_for("宇宙塵", "concept")]
    by_description = store.store_search_text_lists(name, text_query=store.fulltext_query("微粒子"), k=10, chunks=False)
    assert [hit[0] for hit in by_description["entity_text"]] == [entity_id_for("宇宙塵", "concept")]
    chinese_entity = store.store_search_text_lists(name, text_query=store.fulltext_query("倒排"), k=10, chunks=False)
    assert [hit[0] for hit in chinese_entity["entity_text"]] == [entity_id_for("倒排索引", "concept")]
    hits = search_entities(user=alice, query="宇宙塵", scope=Scope.PRIVATE)
    assert hits and hits[0]["name"] == "宇宙塵"

    result = retrieve(actor=alice, graphs=[graph], question="空気", mode="passages", top_k=3)
    passages = [item for item in result.items if item.kind == "passage"]
    assert passages and passages[0].chunk_id == japanese and passages[0].text == JAPANESE


def test_entity_terms_follow_the_served_text_when_a_document_leaves(alice, write_doc) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Leave", scope=Scope.PRIVATE)
    first = write_doc(graph, alice, texts=["Kyoto station."], entities=[("Kyoto", "place", "京都駅の周辺")])
    write_doc(graph, alice, texts=["Kyoto again."], entities=[("Kyoto", "place", "")])
    name = graph.store_name
    query = store.fulltext_query("京都駅")
    assert store.store_search_text_lists(name, text_query=query, k=5, chunks=False)["entity_text"]
    store.store_document_remove(name, document_id=first)
    assert store.store_search_text_lists(name, text_query=query, k=5, chunks=False)["entity_text"] == []


def test_an_existing_store_gains_the_terms_field_and_its_old_chunks_still_match_by_text(db) -> None:  # type: ignore[no-untyped-def]
    name = "exo:test_cjk_upgrade"
    try:
        # A store made before `terms`: the old full-text indexes and a chunk without the property.
        for statement in (
            "CREATE FULLTEXT INDEX FOR (e:Entity) ON (e.name, e.description)",
            "CREATE FULLTEXT INDEX FOR (c:Chunk) ON (c.text)",
            f"CREATE (:Chunk {{id: 'old', text: '{ENGLISH} 宇宙塵'}})",
            "CREATE (:Entity {id: 'e_old', name: 'Cosmic dust', description: '宇宙空間の微粒子'})",
        ):
            store.query(name, statement)
        store._ensured.clear()
        store.store_ensure(name, dimension=3)
        rows = store.ro_query(
            name,
            "CALL db.indexes() YIELD label, properties WHERE label IN ['Chunk', 'Entity'] RETURN label, properties",
        )
        fields = {label: set(properties) for label, properties in rows}
        assert {"text", "terms"} <= fields["Chunk"] and {"name", "description", "terms"} <= fields["Entity"]
        assert _chunk_ids(name, "knowledge graph") == ["old"]
        assert _chunk_ids(name, "宇宙塵") == ["old"]  # the whole token, as before, by `text`
        assert _chunk_ids(name, "宙塵") == ["old"]  # and by the bigrams the upgrade gave it
        assert store.ro_query(name, "MATCH (c:Chunk {id: 'old'}) RETURN c.terms") == [["宇宙 宙塵"]]
        entities = store.store_search_text_lists(name, text_query=store.fulltext_query("微粒子"), k=5, chunks=False)
        assert [hit[0] for hit in entities["entity_text"]] == ["e_old"]
        assert store.store_terms_backfill(name) == 0  # nothing left without terms
        store._ensured.clear()
        store.store_ensure(name, dimension=3)  # idempotent
    finally:
        store.store_drop(name)


def test_the_japanese_pdf_is_found_by_a_japanese_term(  # type: ignore[no-untyped-def]
    alice, alice_client, django_capture_on_commit_callbacks
) -> None:
    credits_grant_admin(account=alice, amount=1000, actor=None, note="tests")
    payload = {"file_content_base64": base64.b64encode(fixture_bytes("pdf/pm_jo.pdf")).decode(), "filename": "jo.pdf"}
    with django_capture_on_commit_callbacks(execute=True):
        response = alice_client.post("/api/v1/documents/", payload, format="json")
    assert response.status_code == 201, response.json()
    document = Document.objects.get(pk=response.json()["id"])
    assert document.status == "processed"
    hits = store.store_chunk_text_hits(document.graph.store_name, text_query=store.fulltext_query("宇宙塵"), k=5)
    chunks = store.ro_query(document.graph.store_name, "MATCH (c:Chunk) RETURN c.id, c.text, c.document_id")
    texts = {chunk_id: text for chunk_id, text, _ in chunks}
    assert {doc for _, _, doc in chunks} == {str(document.id)}
    assert hits and "宇宙塵" in texts[hits[0][0]]
    assert {chunk_id for chunk_id, _ in hits} == {chunk_id for chunk_id, text in texts.items() if "宇宙塵" in text}
    result = retrieve(actor=alice, graphs=[document.graph], question="宇宙塵", mode="passages", top_k=3)
    assert result.items and "宇宙塵" in result.items[0].text


def test_the_start_up_command_upgrades_the_stores_of_existing_graphs(alice) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Before terms", scope=Scope.PRIVATE)
    name = graph.store_name
    store.store_drop(name)  # remake it as a store written before `terms` existed
    for statement in (
        "CREATE FULLTEXT INDEX FOR (c:Chunk) ON (c.text)",
        "CREATE (:Chunk {id: 'old', text: '空気をのんで'})",
    ):
        store.query(name, statement)
    assert _chunk_ids(name, "空気") == []
    out = io.StringIO()
    call_command("graph_stores_ensure", stdout=out)
    assert "not ensured: 0" in out.getvalue()
    assert _chunk_ids(name, "空気") == ["old"]
