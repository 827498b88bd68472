"""The reads graph mode builds its PPR subgraph from, per query or from a per-process index of the graph.

Graph mode's subgraph (graph_mode.graph_rank) is made of what does not change between two writes to a graph: which
passages mention which names, each passage's document and title, and the names a passage writes (keys.name_spans).
Read per query, that is four FalkorDB round trips of a few hundred rows each and most of a query's time. A small
graph's whole mention table is instead loaded once into a SubgraphIndex and served from memory until the next write.

Correctness: an index is kept per store (so per graph, hence per tenant: a graph's index is only ever read for that
graph's store name) under the revision token it read *before* loading (store/revision.py: every write sets a new
token when it is done), and each query reads the token first; another token means a reload. So a query never reads
an index older than the last write it could see. The index is loaded with the same queries, on the primary, that
the per-query path runs, so both give the same rows in the same order (graph mode ranks identically either way).

The load is synchronous: the first query after a write pays it (26-134 ms for 250-430 passages on the bench's
graphs, about 0.2 ms a passage, plus ~0.03 ms a passage to stem its words for the full-text seeds' BM25, which the
first queries would otherwise pay), so graphs with more than INDEX_MAX_CHUNKS passages are read per query (their load
would pass ~0.5 s, and their text would sit in every worker); the last INDEX_GRAPHS graphs read are kept, least
recently used out. A graph written between every two queries (an ingest under way) reloads each time.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from exograph.core.falkor import server_of_key
from exograph.graphs import store
from exograph.graphs.retrieval.keys import name_spans
from exograph.graphs.store.revision import store_revision

INDEX_MAX_CHUNKS = 2_000  # passages up to which a graph is indexed in memory
INDEX_GRAPHS = 16  # graph indexes a process keeps

NameChunks = dict[str, tuple[list[str], int, list[str]]]


class SubgraphReads(Protocol):
    """What graph_rank reads of one graph besides the question's own hits (the store's functions' shapes)."""

    def name_chunks(self, keys: Sequence[str], *, per_name: int) -> NameChunks: ...
    def alias_names(self, keys: Sequence[str], *, limit: int, per_key: int) -> dict[str, list[str]]: ...
    def chunks(self, chunk_ids: Sequence[str]) -> dict[str, dict[str, Any]]: ...
    def mention_names(self, chunk_ids: Sequence[str]) -> list[tuple[str, str]]: ...
    def titles(self, chunk_ids: Sequence[str]) -> dict[str, tuple[str, str]]: ...
    def spans(self, chunk_id: str, text: str) -> list[str]: ...
    def words(self) -> Callable[[Sequence[str]], dict[str, tuple[str, ...]]] | None: ...


@dataclass
class StoreReads:
    """Every read a round trip to the store (a graph too large to index, or a primary that cannot give its token)."""

    store_name: str

    def name_chunks(self, keys: Sequence[str], *, per_name: int) -> NameChunks:
        return store.store_name_chunks(self.store_name, keys=keys, per_name=per_name)

    def alias_names(self, keys: Sequence[str], *, limit: int, per_key: int) -> dict[str, list[str]]:
        return store.store_alias_names(self.store_name, keys=keys, limit=limit, per_key=per_key)

    def chunks(self, chunk_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        return store.store_chunks(self.store_name, chunk_ids)

    def mention_names(self, chunk_ids: Sequence[str]) -> list[tuple[str, str]]:
        return store.store_chunk_mention_names(self.store_name, chunk_ids=chunk_ids)

    def titles(self, chunk_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        return store.store_chunk_titles(self.store_name, chunk_ids)

    def spans(self, chunk_id: str, text: str) -> list[str]:
        return name_spans(text)

    def words(self) -> Callable[[Sequence[str]], dict[str, tuple[str, ...]]] | None:
        return None  # the full-text read reads the texts itself


@dataclass
class SubgraphIndex:
    """One graph's mention table at one revision: name -> (every chunk id mentioning it, in the store's order; their
    number; entity ids), chunk id -> names it mentions (in order), chunk id -> text, document id, title, and
    chunk id -> its BM25 words (store.bm25_words of its text, stemmed once at load for the full-text seeds)."""

    token: str
    names: NameChunks
    mentions: dict[str, list[str]]
    rows: dict[str, dict[str, Any]]
    aliases: dict[str, list[str]] = field(default_factory=dict)  # alias key -> names having it, best supported first
    written: dict[str, list[str]] = field(default_factory=dict)
    stemmed: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def name_chunks(self, keys: Sequence[str], *, per_name: int) -> NameChunks:
        found: NameChunks = {}
        for key in dict.fromkeys(keys):
            if (entry := self.names.get(key)) is not None:
                found[key] = (entry[0][:per_name], entry[1], entry[2])
        return found

    def alias_names(self, keys: Sequence[str], *, limit: int, per_key: int) -> dict[str, list[str]]:
        found = {key: names[:per_key] for key in keys if (names := [n for n in self.aliases.get(key, ()) if n != key])}
        if len(found) > limit:  # which keys the store's LIMIT keeps is its own order: ask it
            raise _AskTheStore
        return found

    def chunks(self, chunk_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        return {cid: self.rows[cid] for cid in chunk_ids if cid in self.rows}

    def mention_names(self, chunk_ids: Sequence[str]) -> list[tuple[str, str]]:
        pairs = [(cid, key) for cid in dict.fromkeys(chunk_ids) for key in self.mentions.get(cid, ())]
        return list(dict.fromkeys(pairs))

    def titles(self, chunk_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        return {cid: (row["document_id"] or "", row["title"]) for cid in chunk_ids if (row := self.rows.get(cid))}

    def words(self) -> Callable[[Sequence[str]], dict[str, tuple[str, ...]]] | None:
        """Chunk ids -> their BM25 words, from memory (the full-text read's rescoring then reads and stems no text)."""
        return lambda chunk_ids: {cid: words for cid in chunk_ids if (words := self.stemmed.get(cid)) is not None}

    def spans(self, chunk_id: str, text: str) -> list[str]:
        spans = self.written.get(chunk_id)
        if spans is None:
            spans = self.written[chunk_id] = name_spans(text)
        return spans


class _AskTheStore(Exception):
    """The index cannot give the store's answer (graph_mode then reads the store)."""


def alias_names(
    reads: SubgraphReads, store_name: str, keys: Sequence[str], *, limit: int, per_key: int
) -> dict[str, list[str]]:
    """reads' alias names for keys (store.store_alias_names' answer), from the store when the index cannot tell."""
    try:
        return reads.alias_names(keys, limit=limit, per_key=per_key)
    except _AskTheStore:
        return store.store_alias_names(store_name, keys=keys, limit=limit, per_key=per_key)


_indexes: OrderedDict[tuple[str, str], SubgraphIndex | None] = OrderedDict()  # None: too large at that token
_tokens: dict[tuple[str, str], str] = {}
_lock = threading.Lock()
_loading: dict[tuple[str, str], threading.Lock] = {}


def subgraph_reads(store_name: str) -> SubgraphReads:
    """The reads for store_name: its index at the store's current revision (loaded now if it has none), else the
    store itself."""
    if INDEX_MAX_CHUNKS <= 0:
        return StoreReads(store_name)
    token = store_revision(store_name)
    if token is None:
        return StoreReads(store_name)
    slot = (server_of_key(store_name), str(store_name))
    held, index = _cached(slot, token)
    if not held:
        with _lock:
            loading = _loading.setdefault(slot, threading.Lock())
        with loading:  # one load per graph at a time; the others wait for it and use it
            held, index = _cached(slot, token)
            if not held:
                index = index_load(store_name, token=token)
                with _lock:
                    _indexes[slot] = index
                    _tokens[slot] = token
                    _indexes.move_to_end(slot)
                    while len(_indexes) > INDEX_GRAPHS:
                        dropped, _ = _indexes.popitem(last=False)
                        _tokens.pop(dropped, None)
                        _loading.pop(dropped, None)
    return index if index is not None else StoreReads(store_name)


def _cached(slot: tuple[str, str], token: str) -> tuple[bool, SubgraphIndex | None]:
    """(True, the index held for slot at token or None if the graph is too large to index), or (False, None)."""
    with _lock:
        if _tokens.get(slot) != token or slot not in _indexes:
            return False, None
        _indexes.move_to_end(slot)
        return True, _indexes[slot]


def index_load(store_name: str, *, token: str) -> SubgraphIndex | None:
    """Load store_name's mention table from the primary (None when it has more than INDEX_MAX_CHUNKS passages)."""
    with store.primary_reads():
        total = store.ro_query(store_name, "MATCH (c:Chunk) RETURN count(c)")
        if total and int(total[0][0] or 0) > INDEX_MAX_CHUNKS:
            return None
        rows = store.ro_query(
            store_name,
            "MATCH (c:Chunk) OPTIONAL MATCH (d:Document {id: c.document_id}) RETURN c.id, c.text, c.document_id, d.title",
        )
        chunk_rows = {r[0]: {"text": r[1] or "", "document_id": r[2], "title": r[3] or ""} for r in rows}
        pairs = store.ro_query(
            store_name,
            "MATCH (c:Chunk)-[:MENTIONS]->(e:Entity) RETURN ID(c), c.id, ID(e), e.id, e.normalized_name",
        )
        held = store.ro_query(
            store_name,
            "MATCH (e:Entity) WHERE size(e.alias_keys) > 0 RETURN e.alias_keys, e.normalized_name, size(e.document_ids)",
        )
    # store_alias_names orders a key's entities by documents (most first), then name, and keeps each name once.
    aliases: dict[str, dict[str, None]] = {}
    for keys, name, _ in sorted((r for r in held if r[1]), key=lambda r: (-int(r[2] or 0), r[1])):
        for key in keys or ():
            aliases.setdefault(key, {})[name] = None
    # The per-query reads return a name's chunks entity by entity (by node id), each entity's chunks by node id, and
    # a chunk's names by the entities' node ids: the same orders, from one read of every mention.
    names: dict[str, tuple[dict[str, None], dict[str, None]]] = {}
    for _, cid, _, eid, key in sorted((r for r in pairs if r[4]), key=lambda r: (r[2], r[0])):
        chunk_ids, entity_ids = names.setdefault(key, ({}, {}))
        chunk_ids[cid] = None
        entity_ids[eid] = None
    mentions: dict[str, dict[str, None]] = {}
    for _, cid, _, _, key in sorted((r for r in pairs if r[4]), key=lambda r: (r[0], r[2])):
        mentions.setdefault(cid, {})[key] = None
    return SubgraphIndex(
        token=token,
        names={key: (list(cids), len(cids), list(eids)) for key, (cids, eids) in names.items()},
        mentions={cid: list(keys) for cid, keys in mentions.items()},
        rows=chunk_rows,
        aliases={key: list(names) for key, names in aliases.items()},
        # Stemmed here, so the first queries after a load do not (~33 us a passage; ~220 a query's rescoring).
        stemmed={cid: store.bm25_words(row["text"]) for cid, row in chunk_rows.items()},
    )


def indexes_clear() -> None:
    """Forget every index (tests)."""
    with _lock:
        _indexes.clear()
        _tokens.clear()
