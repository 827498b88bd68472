"""neo4j-graphrag retrievers over ExoGraph (`pip install "exograph-client[graphrag]"`).

    from neo4j_graphrag.generation import GraphRAG
    from exograph_client.graphrag import ExoGraphRetriever

    rag = GraphRAG(retriever=ExoGraphRetriever(client, mode="graph", graph_id="…"), llm=my_llm)
    rag.search("What protects qubits from noise?", return_context=True)

Two families, both `neo4j_graphrag.retrievers.base.Retriever`s that `GraphRAG` takes unchanged:

- `ExoGraphRetriever` asks the hosted service (REST, through `exograph_client.Client`).
- `FalkorDBVectorRetriever`, `FalkorDBHybridRetriever`, `FalkorDBGraphRetriever` read a FalkorDB graph that
  ExoGraph wrote (self-hosted, direct store access; the store of graph `<id>` is the FalkorDB graph `exo:<id>`)
  with the official `falkordb` client and FalkorDB's own procedures (`db.idx.vector.queryNodes`,
  `db.idx.fulltext.queryNodes`).

How they fit neo4j-graphrag without Neo4j: `Retriever.__init__` takes a `neo4j.Driver`, wraps it and, when the
class's `VERIFY_NEO4J_VERSION` is true, calls `dbms.components()` on it. None of that applies here, so these
classes set `VERIFY_NEO4J_VERSION = False` and do not call `Retriever.__init__` (`self.driver` is None; nothing in
`search`, `get_result_formatter`, `convert_to_tool` or `GraphRAG` reads it). The rest is the library's own path:
`get_search_results` returns a `RawSearchResult` of `neo4j.Record`s built from plain values, `search` formats them
with `result_formatter` (yours if given) into `RetrieverResultItem`s whose `content` is the passage or fact text
(what `GraphRAG` joins into the prompt's context) and whose `metadata` carries the citation.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import neo4j
from neo4j_graphrag.retrievers.base import Retriever
from neo4j_graphrag.types import RawSearchResult, RetrieverResultItem

from exograph_client.client import Client
from exograph_client.models import Evidence

__all__ = [
    "ExoGraphRetriever",
    "FalkorDBGraphRetriever",
    "FalkorDBHybridRetriever",
    "FalkorDBVectorRetriever",
    "fulltext_query",
]

MODES = ("rag", "graph")
CO_OCCURRENCE = "RELATED_TO"
ResultFormatter = Callable[[neo4j.Record], RetrieverResultItem]


class QueryEmbedder(Protocol):
    """What the FalkorDB retrievers need of an embedder: neo4j_graphrag.embeddings.Embedder has it. It must be the
    model the graph was written with (ExoGraph's default: all-MiniLM-L6-v2, 384 dimensions, unit length)."""

    def embed_query(self, text: str) -> list[float]: ...


class _DriverlessRetriever(Retriever):
    """A Retriever that reads something other than Neo4j: no driver, no version check (see the module docstring)."""

    VERIFY_NEO4J_VERSION = False

    def __init__(self, result_formatter: ResultFormatter | None = None) -> None:
        # Retriever.__init__ is not called on purpose: it needs a neo4j.Driver (user agent, dbms.components()).
        self.driver = None  # type: ignore[assignment]
        self.neo4j_database = None
        self.result_formatter = result_formatter

    def default_record_formatter(self, record: neo4j.Record) -> RetrieverResultItem:
        return RetrieverResultItem(content=record.get("content"), metadata=record.get("metadata"))

    @staticmethod
    def _records(rows: Sequence[tuple[str, dict[str, Any]]]) -> list[neo4j.Record]:
        return [neo4j.Record({"content": content, "metadata": metadata}) for content, metadata in rows]


# --- the hosted service ------------------------------------------------------------------------------------------


class ExoGraphRetriever(_DriverlessRetriever):
    """Evidence from ExoGraph's retrieval over REST: mode "rag" (passages) or "graph" (facts, relations, passages
    and entities from the graph walk), in one graph (graph_id) or every graph of a scope (world or private).

    Each search is one `POST /api/v1/retrieve/` (free; it counts against the request limits): the evidence
    ExoGraph's chat engine would hand its own model, best first, without an answer. Items: content = the passage or
    fact; metadata = the citation (document, document_id, page, chunk_id, view_url, origin, kind, graph_id, url).
    Errors are exograph_client's (ExoGraphError and subclasses).
    """

    def __init__(
        self,
        client: Client,
        *,
        mode: str = "rag",
        graph_id: str | None = None,
        scope: str | None = None,
        result_formatter: ResultFormatter | None = None,
    ) -> None:
        super().__init__(result_formatter)
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}; got {mode!r}.")
        self.client = client
        self.mode = mode
        self.graph_id = graph_id
        self.scope = scope

    def get_search_results(
        self, query_text: str, top_k: int = 12, mode: str | None = None, graph_id: str | None = None
    ) -> RawSearchResult:
        """The evidence ExoGraph retrieves for query_text (at most top_k items, best first).

        Args:
            query_text (str): The question.
            top_k (int): How many items to keep (1 to 30).
            mode (str): "rag" or "graph"; the retriever's own when omitted.
            graph_id (str): One graph; the retriever's own when omitted.
        """
        engine = mode or self.mode
        if engine not in MODES:
            raise ValueError(f"mode must be one of {MODES}; got {engine!r}.")
        found = self.client.retrieve(
            query_text,
            mode=engine,
            top_k=max(1, min(top_k, 30)),
            graph_id=graph_id or self.graph_id,
            graph_scope=self.scope,
        )
        rows = [(item.text, evidence_metadata(item)) for item in found.items[: max(top_k, 0)]]
        return RawSearchResult(records=self._records(rows), metadata={"mode": engine})


def evidence_metadata(item: Evidence) -> dict[str, Any]:
    """The citation of one ExoGraph evidence item, as RetrieverResultItem metadata."""
    return {
        "document": item.source,
        "document_id": item.document_id,
        "page": item.page,
        "chunk_id": item.chunk_id,
        "view_url": item.view_url,
        "origin": item.origin,
        "kind": item.kind,
        "graph_id": item.graph_id,
        "url": item.url,
        "cited": bool(item.cited),
    }


# --- a FalkorDB graph written by ExoGraph -------------------------------------------------------------------------

_WORD = re.compile(r"[^\W_]+")
_STOPWORDS = frozenset(
    "a an the of in on at to for from by with and or but is was were are be been what which who whom whose when "
    "where why how did do does that this these those it its as than into about not no if can".split()
)

# A passage by chunk id, with its document's name and provenance (ExoGraph's Document node).
_PASSAGES = (
    "UNWIND $ids AS cid MATCH (c:Chunk {id: cid}) OPTIONAL MATCH (d:Document {id: c.document_id}) "
    "RETURN c.id, c.text, c.page, c.document_id, d.filename, d.title, d.source_url"
)


def fulltext_query(text: str, *, max_terms: int = 16) -> str:
    """Text as a RediSearch query that cannot carry operators: its words OR-ed (function words dropped unless that
    leaves nothing). Empty when the text has no word."""
    words = [w for w in dict.fromkeys(_WORD.findall(text.casefold())) if len(w) >= 2]
    kept = [w for w in words if w not in _STOPWORDS] or words
    return "|".join(w[:64] for w in kept[:max_terms])


class _FalkorDBRetriever(_DriverlessRetriever):
    """Reads one FalkorDB graph (a `falkordb.Graph`, e.g. `FalkorDB(...).select_graph("exo:<graph id>")`)."""

    def __init__(self, graph: Any, *, result_formatter: ResultFormatter | None = None) -> None:
        super().__init__(result_formatter)
        self.graph = graph

    def _read(self, cypher: str, params: dict[str, Any]) -> list[list[Any]]:
        return list(self.graph.ro_query(cypher, params).result_set)

    def _passages(self, chunk_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """chunk id -> {text, metadata} for the chunks that exist."""
        if not chunk_ids:
            return {}
        found: dict[str, dict[str, Any]] = {}
        for cid, text, page, document_id, filename, title, source_url in self._read(
            _PASSAGES, {"ids": list(chunk_ids)}
        ):
            found[cid] = {
                "text": text or "",
                "metadata": {
                    "document": title or filename or "",
                    "document_id": document_id,
                    "page": page,
                    "chunk_id": cid,
                    "url": source_url or None,
                    "origin": "falkordb",
                    "kind": "passage",
                },
            }
        return found

    def _vector_chunks(self, vector: list[float], k: int) -> list[tuple[str, float]]:
        """(chunk id, cosine similarity), best first. Over-fetches: ExoGraph leaves superseded vector nodes in the
        index (their chunk points at another vkey); those are skipped."""
        rows = self._read(
            "CALL db.idx.vector.queryNodes('ChunkVector', 'embedding', $k, vecf32($v)) YIELD node, score "
            "MATCH (c:Chunk {id: node.chunk_id}) WHERE c.vkey = node.key "
            "RETURN c.id, score ORDER BY score ASC LIMIT $limit",
            {"k": max(4 * k, 20), "v": [float(x) for x in vector], "limit": k},
        )
        return [(cid, 1.0 - float(distance)) for cid, distance in rows]

    def _text_chunks(self, query_text: str, k: int) -> list[tuple[str, float]]:
        q = fulltext_query(query_text)
        if not q:
            return []
        rows = self._read(
            "CALL db.idx.fulltext.queryNodes('Chunk', $q) YIELD node, score "
            "RETURN node.id, score ORDER BY score DESC LIMIT $k",
            {"q": q, "k": k},
        )
        return [(cid, float(score)) for cid, score in rows]

    def _ranked(
        self, ranked: Sequence[tuple[str, float]], extra: dict[str, dict[str, Any]]
    ) -> list[tuple[str, dict[str, Any]]]:
        passages = self._passages([cid for cid, _ in ranked])
        rows = []
        for cid, score in ranked:
            if cid in passages:
                passage = passages[cid]
                rows.append((passage["text"], {**passage["metadata"], "score": score, **extra.get(cid, {})}))
        return rows


class FalkorDBVectorRetriever(_FalkorDBRetriever):
    """Passages by meaning: KNN over ExoGraph's `ChunkVector` index (`db.idx.vector.queryNodes`)."""

    def __init__(self, graph: Any, embedder: QueryEmbedder, *, result_formatter: ResultFormatter | None = None) -> None:
        super().__init__(graph, result_formatter=result_formatter)
        self.embedder = embedder

    def get_search_results(
        self, query_text: str | None = None, query_vector: list[float] | None = None, top_k: int = 5
    ) -> RawSearchResult:
        """The top_k passages nearest the query (its vector, or query_text embedded by the retriever's embedder).

        Args:
            query_text (str): The question.
            query_vector (list[float]): A query vector instead of the text.
            top_k (int): How many passages.
        """
        vector = query_vector if query_vector is not None else self.embedder.embed_query(query_text or "")
        ranked = self._vector_chunks(vector, top_k)
        return RawSearchResult(records=self._records(self._ranked(ranked, {})), metadata={"mode": "vector"})


class FalkorDBHybridRetriever(FalkorDBVectorRetriever):
    """Passages by meaning and by words: the `ChunkVector` KNN and the `Chunk` full-text index
    (`db.idx.fulltext.queryNodes`), fused by reciprocal rank (score = sum of 1 / (60 + rank) over both lists)."""

    RRF_K = 60

    def get_search_results(
        self, query_text: str | None = None, query_vector: list[float] | None = None, top_k: int = 5
    ) -> RawSearchResult:
        """The top_k passages of the fused vector and full-text lists.

        Args:
            query_text (str): The question (embedded unless query_vector is given; its words searched).
            query_vector (list[float]): A query vector instead of embedding the text.
            top_k (int): How many passages.
        """
        text = query_text or ""
        vector = query_vector if query_vector is not None else self.embedder.embed_query(text)
        lists = {"vector": self._vector_chunks(vector, 2 * top_k), "fulltext": self._text_chunks(text, 2 * top_k)}
        fused: dict[str, float] = {}
        found_by: dict[str, list[str]] = {}
        for name, ranked in lists.items():
            for rank, (cid, _score) in enumerate(ranked):
                fused[cid] = fused.get(cid, 0.0) + 1.0 / (self.RRF_K + rank + 1)
                found_by.setdefault(cid, []).append(name)
        best = sorted(fused.items(), key=lambda pair: -pair[1])[:top_k]
        extra = {cid: {"found_by": found_by[cid]} for cid, _ in best}
        return RawSearchResult(records=self._records(self._ranked(best, extra)), metadata={"mode": "hybrid"})


class FalkorDBGraphRetriever(FalkorDBVectorRetriever):
    """Facts by a graph walk: seed entities by meaning (`EntityVector` KNN) and by name (the `Entity` full-text
    index), then their typed relations up to `hops` away; each relation becomes one fact, "A RELATION B", followed
    by the passage it was extracted from (its first chunk id), with that passage's citation as metadata. A fact
    scores the seed scores of its two ends (reciprocal ranks in the two seed lists), raised by how often it was
    found; ExoGraph's generic RELATED_TO (co-occurrence, no verb) counts half."""

    def __init__(
        self,
        graph: Any,
        embedder: QueryEmbedder,
        *,
        hops: int = 1,
        seeds: int = 5,
        result_formatter: ResultFormatter | None = None,
    ) -> None:
        super().__init__(graph, embedder, result_formatter=result_formatter)
        if hops not in (1, 2):
            raise ValueError("hops must be 1 or 2.")
        self.hops = hops
        self.seeds = seeds

    def _seed_entities(self, text: str, vector: list[float]) -> dict[str, float]:
        seeds: dict[str, float] = {}
        rows = self._read(
            "CALL db.idx.vector.queryNodes('EntityVector', 'embedding', $k, vecf32($v)) YIELD node, score "
            "MATCH (e:Entity {id: node.entity_id}) WHERE node.key IN coalesce(e.doc_vkeys, [e.id]) "
            "WITH e, min(score) AS score RETURN e.id, score ORDER BY score ASC LIMIT $limit",
            {"k": max(4 * self.seeds, 20), "v": [float(x) for x in vector], "limit": self.seeds},
        )
        for rank, (eid, _distance) in enumerate(rows):
            seeds[eid] = seeds.get(eid, 0.0) + 1.0 / (60 + rank + 1)
        q = fulltext_query(text)
        if q:
            rows = self._read(
                "CALL db.idx.fulltext.queryNodes('Entity', $q) YIELD node, score "
                "RETURN node.id, score ORDER BY score DESC LIMIT $k",
                {"q": q, "k": self.seeds},
            )
            for rank, (eid, _score) in enumerate(rows):
                seeds[eid] = seeds.get(eid, 0.0) + 1.0 / (60 + rank + 1)
        return seeds

    def get_search_results(
        self, query_text: str | None = None, query_vector: list[float] | None = None, top_k: int = 10
    ) -> RawSearchResult:
        """The top_k facts around the entities the query names or means.

        Args:
            query_text (str): The question.
            query_vector (list[float]): A query vector instead of embedding the text.
            top_k (int): How many facts.
        """
        text = query_text or ""
        vector = query_vector if query_vector is not None else self.embedder.embed_query(text)
        seeds = self._seed_entities(text, vector)
        if not seeds:
            return RawSearchResult(records=[], metadata={"mode": "graph", "seeds": []})
        rows = self._read(
            f"UNWIND $seeds AS sid MATCH (s:Entity {{id: sid}})-[r*1..{self.hops}]-(:Entity) "
            "UNWIND r AS rel WITH sid, rel WHERE NOT type(rel) IN ['HAS_CHUNK', 'MENTIONS'] "
            "WITH DISTINCT sid, rel WITH sid, rel, startNode(rel) AS a, endNode(rel) AS b "
            "RETURN sid, a.id, a.name, type(rel), b.id, b.name, coalesce(rel.count, 1), coalesce(rel.chunk_ids, [])",
            {"seeds": list(seeds)},
        )
        facts: dict[tuple[str, str, str], dict[str, Any]] = {}
        for _sid, a_id, a_name, rel_type, b_id, b_name, count, chunk_ids in rows:
            key = (a_id, rel_type, b_id)
            if key in facts:
                continue
            score = (seeds.get(a_id, 0.0) + seeds.get(b_id, 0.0)) * (1.0 + min(float(count), 10.0) / 10.0)
            if rel_type == CO_OCCURRENCE:
                score /= 2
            facts[key] = {
                "score": score,
                "fact": f"{a_name} {rel_type.replace('_', ' ').lower()} {b_name}",
                "subject": a_name,
                "relation": rel_type,
                "object": b_name,
                "chunk_ids": list(chunk_ids),
            }
        best = sorted(facts.values(), key=lambda f: (-f["score"], f["fact"]))[:top_k]
        passages = self._passages([f["chunk_ids"][0] for f in best if f["chunk_ids"]])
        out = []
        for fact in best:
            passage = passages.get(fact["chunk_ids"][0]) if fact["chunk_ids"] else None
            metadata = dict(passage["metadata"]) if passage else {"origin": "falkordb"}
            metadata.update(
                kind="fact",
                subject=fact["subject"],
                relation=fact["relation"],
                object=fact["object"],
                chunk_ids=fact["chunk_ids"],
                score=fact["score"],
            )
            content = f"{fact['fact']}: {passage['text']}" if passage else fact["fact"]
            out.append((content, metadata))
        return RawSearchResult(records=self._records(out), metadata={"mode": "graph", "seeds": list(seeds)})
