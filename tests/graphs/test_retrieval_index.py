"""Graph mode's per-process index of a graph's mentions (graphs/retrieval/subgraph_index.py): it answers as the store
does, only for its own graph, and never after a write it could have seen (store/revision.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from exograph.core.falkor import falkordb_client, server_of_key
from exograph.core.scope import Scope
from exograph.graphs import store
from exograph.graphs.embeddings import get_embedder
from exograph.graphs.retrieval import retrieve, subgraph_index
from exograph.graphs.services import graph_create, graph_document_remove, graph_document_write
from exograph.graphs.store.revision import revision_key, store_revision
from exograph.graphs.types import ChunkIn, EntityIn, MentionIn

ABBEY = ("Quillon Abbey", "organization", "")
MILL = ("Brannock Mill", "organization", "")


@pytest.fixture(autouse=True)
def _fresh_indexes() -> Iterator[None]:
    subgraph_index.indexes_clear()
    yield
    subgraph_index.indexes_clear()


def _graph_items(actor, graph, question: str) -> list[tuple[str, str | None, str, float]]:  # type: ignore[no-untyped-def]
    result = retrieve(actor=actor, graphs=[graph], question=question, mode="graph", top_k=10)
    return [(item.kind, item.chunk_id, item.text, round(item.score, 12)) for item in result.items]


def _store_items(monkeypatch, actor, graph, question: str) -> list[tuple[str, str | None, str, float]]:  # type: ignore[no-untyped-def]
    """The same question answered by per-query store reads (no index)."""
    with monkeypatch.context() as patch:
        patch.setattr(subgraph_index, "INDEX_MAX_CHUNKS", 0)
        return _graph_items(actor, graph, question)


@pytest.mark.django_db
def test_each_graph_is_answered_from_its_own_index(alice, bob, write_doc) -> None:  # type: ignore[no-untyped-def]
    """Two tenants' graphs hold a document with the same id and the same name in it, but other words. Once both are
    indexed, each owner's question is answered from that owner's graph alone."""
    mine = graph_create(actor=alice, name="Abbey notes", scope=Scope.PRIVATE)
    theirs = graph_create(actor=bob, name="Abbey notes", scope=Scope.PRIVATE)
    write_doc(mine, alice, texts=["Quillon Abbey keeps hand-copied herbals."], entities=[ABBEY], document_id="doc_x")
    write_doc(theirs, bob, texts=["Quillon Abbey presses apples into cider."], entities=[ABBEY], document_id="doc_x")

    first = _graph_items(alice, mine, "What old books does the Quillon Abbey library hold?")
    assert isinstance(subgraph_index.subgraph_reads(mine.store_name), subgraph_index.SubgraphIndex)
    second = _graph_items(bob, theirs, "What drink does Quillon Abbey make from orchard fruit?")
    assert isinstance(subgraph_index.subgraph_reads(theirs.store_name), subgraph_index.SubgraphIndex)

    passages = [text for kind, _, text, _ in second if kind == "passage"]
    assert passages and all("cider" in text and "herbals" not in text for text in passages)
    assert all("cider" not in text for kind, _, text, _ in first if kind == "passage")
    index = subgraph_index.subgraph_reads(theirs.store_name)
    assert [row["text"] for row in index.chunks(["doc_x:0"]).values()] == ["Quillon Abbey presses apples into cider."]


@pytest.mark.django_db
def test_a_write_reloads_the_index(alice, write_doc, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A document written after the graph was indexed is in the next query's subgraph (its names link it), and that
    query ranks exactly as per-query reads of the store do."""
    graph = graph_create(actor=alice, name="Mills", scope=Scope.PRIVATE)
    write_doc(graph, alice, texts=["Quillon Abbey brews a dark ale every winter."], entities=[ABBEY])
    question = "Who grinds the grain for the monks of Quillon Abbey?"
    _graph_items(alice, graph, question)  # indexed now
    token = store_revision(graph.store_name)

    mill = write_doc(
        graph, alice, texts=["Brannock Mill grinds barley for Quillon Abbey's brewers."], entities=[ABBEY, MILL]
    )
    assert store_revision(graph.store_name) != token
    index = subgraph_index.subgraph_reads(graph.store_name)
    assert f"{mill}:0" in index.name_chunks(["quillon abbey"], per_name=20)["quillon abbey"][0]
    assert "brannock mill" in index.name_chunks(["brannock mill"], per_name=20)
    assert _graph_items(alice, graph, question) == _store_items(monkeypatch, alice, graph, question)


@pytest.mark.django_db
def test_a_removed_document_leaves_the_index(alice, write_doc, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Removals", scope=Scope.PRIVATE)
    kept = write_doc(graph, alice, texts=["Quillon Abbey brews a dark ale every winter."], entities=[ABBEY])
    gone = write_doc(
        graph, alice, texts=["Brannock Mill grinds barley for Quillon Abbey's brewers."], entities=[ABBEY, MILL]
    )
    question = "Which miller supplies the Quillon Abbey brewery?"
    before = _graph_items(alice, graph, question)
    assert f"{gone}:0" in {chunk for _, chunk, _, _ in before}

    graph_document_remove(graph=graph, document_id=gone)
    index = subgraph_index.subgraph_reads(graph.store_name)
    names = index.name_chunks(["quillon abbey", "brannock mill"], per_name=20)
    assert list(names) == ["quillon abbey"] and names["quillon abbey"][:2] == ([f"{kept}:0"], 1)
    after = _graph_items(alice, graph, question)
    assert f"{gone}:0" not in {chunk for _, chunk, _, _ in after}
    assert after == _store_items(monkeypatch, alice, graph, question)


@pytest.mark.django_db
def test_the_index_reads_what_the_store_reads_in_its_order(alice, write_doc) -> None:  # type: ignore[no-untyped-def]
    """A name in more passages than a query takes (per_name) keeps the same ones, in the same order; a passage's
    names, titles and texts are the store's."""
    graph = graph_create(actor=alice, name="Orders", scope=Scope.PRIVATE)
    entities = [ABBEY, MILL, ("Tarrow River", "location", "")]
    for n in range(5):
        write_doc(
            graph,
            alice,
            texts=[f"Letter {n}: Quillon Abbey paid Brannock Mill on the Tarrow River.", f"Postscript {n} of it."],
            entities=entities,
        )
    index = subgraph_index.subgraph_reads(graph.store_name)
    assert isinstance(index, subgraph_index.SubgraphIndex)
    keys = ["tarrow river", "quillon abbey", "nobody", "brannock mill"]
    chunk_ids = [
        cid
        for cid, _ in store.store_chunk_vector_hits(graph.store_name, vector=get_embedder().embed_one("abbey"), k=10)
    ]
    assert len(chunk_ids) == 10
    for per_name in (2, 20):
        assert index.name_chunks(keys, per_name=per_name) == store.store_name_chunks(
            graph.store_name, keys=keys, per_name=per_name
        )
    assert index.mention_names(chunk_ids) == store.store_chunk_mention_names(graph.store_name, chunk_ids=chunk_ids)
    assert index.titles(chunk_ids) == store.store_chunk_titles(graph.store_name, chunk_ids)
    rows = store.store_chunks(graph.store_name, chunk_ids)
    assert {cid: row["text"] for cid, row in index.chunks(chunk_ids).items()} == {c: r["text"] for c, r in rows.items()}
    # Graph mode's full-text seeds rescore with the index's words (stemmed at load): the same hits as the store's read.
    held = index.words()
    assert held is not None
    assert index.stemmed == {cid: store.bm25_words(row["text"]) for cid, row in index.rows.items()}  # all, at load
    query = store.fulltext_query("Which letter did the abbey send to the mill? A postscript")
    hits = store.store_chunk_text_hits(graph.store_name, text_query=query, k=6)
    assert len(hits) == 6
    assert store.store_chunk_text_hits(graph.store_name, text_query=query, k=6, chunk_words=held) == hits
    assert subgraph_index.StoreReads(graph.store_name).words() is None  # it reads them itself


@pytest.mark.django_db
def test_only_writes_change_the_revision(alice, write_doc) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Revisions", scope=Scope.PRIVATE)
    first = store_revision(graph.store_name)
    assert first and store_revision(graph.store_name) == first  # a store nobody wrote yet has one too, and keeps it
    write_doc(graph, alice, texts=["Quillon Abbey brews a dark ale."], entities=[ABBEY])
    written = store_revision(graph.store_name)
    assert written != first
    _graph_items(alice, graph, "What does the abbey brew?")
    assert store_revision(graph.store_name) == written  # reads leave it
    store.store_drop(graph.store_name)
    assert not falkordb_client(server_of_key(graph.store_name)).connection.exists(revision_key(graph.store_name))
    assert store_revision(graph.store_name) not in {first, written}  # a dropped store leaves no key behind


@pytest.mark.django_db
def test_the_index_links_aliases_as_the_store_does(alice) -> None:  # type: ignore[no-untyped-def]
    """A name's other surface forms link a question key to the names having it, best supported first, as the store's
    alias read does; past the read's key limit the index asks the store."""
    graph = graph_create(actor=alice, name="Aliases", scope=Scope.PRIVATE)
    trusts = [("Tarrow River Trust", 3), ("Tarrow Angling Trust", 1), ("Tarrow Rowing Trust", 2)]
    for name, documents in trusts:
        for n in range(documents):
            text = f"Note {n}: the {name}, called the Trust at Quillon Abbey, met at the gate."
            graph_document_write(
                graph=graph,
                document_id=f"doc_{name.split()[1].lower()}_{n}",
                filename="notes.txt",
                contributor=alice,
                chunks=[
                    ChunkIn(id=f"c_{name}_{n}", text=text, page=1, ordinal=0, embedding=get_embedder().embed_one(text))
                ],
                entities=[EntityIn(name=name, type="organization", aliases=("the Trust", "Tarrow")), EntityIn(*ABBEY)],
                mentions=[
                    MentionIn(chunk_id=f"c_{name}_{n}", entity_name=e, entity_type="organization")
                    for e in (name, ABBEY[0])
                ],
                relations=[],
            )
    index = subgraph_index.subgraph_reads(graph.store_name)
    assert isinstance(index, subgraph_index.SubgraphIndex)
    keys = ["the trust", "tarrow", "quillon abbey", "nobody"]
    expected = store.store_alias_names(graph.store_name, keys=keys, limit=24, per_key=2)
    assert expected["the trust"] == ["tarrow river trust", "tarrow rowing trust"]  # most documents first, 2 a key
    assert index.alias_names(keys, limit=24, per_key=2) == expected
    assert subgraph_index.alias_names(index, graph.store_name, keys, limit=1, per_key=5) == (
        store.store_alias_names(graph.store_name, keys=keys, limit=1, per_key=5)
    )


def _spy_writes(monkeypatch, fail_on: str | None = None) -> list[str]:  # type: ignore[no-untyped-def]
    """Record, in order, each write query to the store ('write') and each revision bump ('bump' / 'bump quiet');
    a write whose text holds fail_on raises StoreUnavailable, as a store that went down mid-write."""
    from exograph.graphs.store import core, revision

    seen: list[str] = []
    execute, bump = core._execute, revision.store_revision_bump

    def spy_execute(store_name, cypher, values, *, read_only):  # type: ignore[no-untyped-def]
        if not read_only:
            seen.append("write")
            if fail_on and fail_on in cypher:
                raise store.StoreUnavailable("down", code="graph_store_unavailable")
        return execute(store_name, cypher, values, read_only=read_only)

    def spy_bump(store_name, *, quiet=False):  # type: ignore[no-untyped-def]
        seen.append("bump quiet" if quiet else "bump")
        bump(store_name, quiet=quiet)

    monkeypatch.setattr(core, "_execute", spy_execute)
    monkeypatch.setattr(core, "store_revision_bump", spy_bump)
    monkeypatch.setattr(revision, "store_revision_bump", spy_bump)
    return seen


@pytest.mark.django_db
def test_a_document_write_changes_the_revision_once_after_its_last_query(alice, write_doc, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="One bump", scope=Scope.PRIVATE)
    write_doc(graph, alice, texts=["Quillon Abbey brews a dark ale."], entities=[ABBEY])
    token = store_revision(graph.store_name)
    seen = _spy_writes(monkeypatch)
    write_doc(
        graph,
        alice,
        texts=["Brannock Mill grinds barley for Quillon Abbey.", "Quillon Abbey pays Brannock Mill in ale."],
        entities=[ABBEY, MILL],
        relations=[("Brannock Mill", "supplies", "Quillon Abbey")],
    )
    assert seen.count("write") > 3 and seen.count("bump") == 1 and seen[-1] == "bump"
    assert store_revision(graph.store_name) != token


@pytest.mark.django_db
def test_a_document_write_that_fails_midway_still_changes_the_revision(alice, write_doc, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Failed write", scope=Scope.PRIVATE)
    write_doc(graph, alice, texts=["Quillon Abbey brews a dark ale."], entities=[ABBEY])
    token = store_revision(graph.store_name)
    seen = _spy_writes(monkeypatch, fail_on="MERGE (c)-[:MENTIONS]->(e)")
    with pytest.raises(store.StoreUnavailable):
        write_doc(graph, alice, texts=["Brannock Mill grinds barley for Quillon Abbey."], entities=[ABBEY, MILL])
    assert seen.count("write") > 2 and seen[-1] == "bump quiet" and "bump" not in seen
    assert store_revision(graph.store_name) != token  # what landed before the failure is reloaded by a reader
