"""Retrieve: the one pure read shared by search, chat and research (see DESIGN.md "Flows: Retrieve").

No writes, no Celery, no earnings: `retrieve` returns the ids of the accounts whose World Graph
knowledge is in the evidence, and the caller records them with billing's `earnings_record`.

Search paths (each usable alone, fused by reciprocal rank): passages by vector and full text
directly over chunks; entities by exact name/alias (question n-grams against the indexed
normalised names), fuzzy full text and vectors; a walk from the entities found over typed relation
edges only, capped per hop (each hop gets its share) and preferring relations between hits.

Mode `graph` ranks like HippoRAG: a bounded subgraph (passages and entity names as nodes, a passage tied
to each name it mentions or writes, weighted by the name's specificity) is pulled from FalkorDB and ranked
in Python by Personalized PageRank (scipy sparse), seeded by the names the question spells out plus a
share of the top dense passage hits. Passages rank by PPR mass; the relations between entities that carry
mass become facts, and the top entities evidence. Ranking in Python over a pulled subgraph is the measured
choice: the subgraph read is a handful of indexed queries and the PPR itself takes ~1-5 ms, where FalkorDB's
own PageRank runs over a whole label set and takes no personalisation vector.
"""

from __future__ import annotations

import logging
import math
import os
import re
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

import numpy as np
from scipy import sparse

from exograph.accounts.models import User
from exograph.core.errors import NotFound, ValidationError
from exograph.core.scope import Scope
from exograph.graphs import store
from exograph.graphs.models import WORLD_GRAPH_ID, Graph
from exograph.graphs.selectors import (
    MAX_N_RESULTS,
    RRF_K,
    VECTOR_OVERFETCH,
    _check_n_results,
    _check_query,
    _fuse,
    embedder_check,
    search_graphs_for_user,
    snippet,
)
from exograph.graphs.store.core import STOPWORDS
from exograph.graphs.types import EntityHit, normalize_name, title_bare

logger = logging.getLogger(__name__)

Mode = Literal["passages", "hybrid", "graph"]
Kind = Literal["entity", "relation", "fact", "passage"]
Origin = Literal["private", "world"]

MODES: tuple[str, ...] = ("passages", "hybrid", "graph")
MAX_TOP_K = 100
MAX_HOPS = 3
MIN_BUDGET = 200
MAX_BUDGET = 200_000
DEFAULT_BUDGET = 8_000
PASSAGE_CHARS = 1_200
WALK_CAP = 60  # relations a walk may return per graph, shared equally by the hops
MAX_NGRAM = 6  # longest question n-gram tried as an exact entity name
PER_ENTITY_CHUNKS = 20  # passages pulled per name into the PPR subgraph
NAME_SPANS_PER_PASSAGE = 400  # capitalised name spans a passage may link by (name_spans)
# Names of the first ring's passages read per query: bounds the slowest queries (3,000 ranked the same).
MAX_RING_NAMES = 1_500
# Chosen on the development halves (bench/retrieval.py), one setting for every dataset: the walk restarts with
# 0.2 (HippoRAG's 0.5 lost ~10 R@5 on 2Wiki: the mass must travel from a linked name to its passage and on to the
# passages that one names); the dense hits take a small share (0.2) so they do not drown the chain.
PPR_DAMPING = 0.8
# Weight of a passage naming a document's title, shared by that document's passages (a name points at a
# document, not at each of its chunks in full); a mention weighs < 1.
PPR_TITLE_LINK = 8.0
PPR_PASSAGE_SHARE = 0.2  # share of the reset mass given to the dense passage hits (the rest: linked names)
PPR_PASSAGE_SEEDS = 10  # dense hits seeded
PPR_ITERATIONS = 100
# Passages of one source (same document title, or same untitled document) after the first SAME_SOURCE_FREE
# are damped by SAME_SOURCE_DAMP per extra passage: a chain's hops sit in different sources, and a source that
# every hop names would otherwise fill the top ranks with its own passages. Order within a source is kept.
SAME_SOURCE_FREE = 1
SAME_SOURCE_DAMP = 0.5
ALIAS_NAMES = 5  # names a question key that is only an alias links to ("III" -> each album titled "III (...)")
FACT_ENTITIES = 40  # graph mode: facts are the relations among this many entities of the most mass


@dataclass(frozen=True)
class Evidence:
    """One evidence item: what chat numbers [n] and research cites."""

    kind: Kind
    text: str
    graph_id: str
    score: float
    origin: Origin
    document_id: str | None = None
    source: str = ""  # file name, or the source title of a text/research document
    url: str | None = None
    page: int | None = None
    chunk_id: str | None = None
    entity_ids: tuple[str, ...] = ()
    # relations and facts: every chunk and document they were extracted from (chunk_id/document_id are the first)
    chunk_ids: tuple[str, ...] = ()
    document_ids: tuple[str, ...] = ()
    triple: tuple[str, str, str] | None = None  # relations and facts: (subject, predicate, object)


@dataclass(frozen=True)
class RetrievalResult:
    """Evidence best first within the character budget, and the World Graph contributors it carries."""

    mode: Mode
    items: list[Evidence]
    contributor_ids: list[int]
    truncated: bool = False  # the budget left out items


@dataclass
class _Relation:
    source_id: str
    source: str
    type: str
    target_id: str
    target: str
    strength: int
    chunk_ids: list[str]
    document_ids: list[str]
    contributors: list[int]
    hop: int

    @property
    def triple(self) -> tuple[str, str, str]:
        return (self.source, self.type.lower().replace("_", " "), self.target)


@dataclass
class _GraphRead:
    """What one graph contributed, before ranking across graphs."""

    graph: Graph
    passages: dict[str, float] = field(default_factory=dict)  # chunk id -> score
    entities: dict[str, float] = field(default_factory=dict)  # entity id -> score
    relations: list[_Relation] = field(default_factory=list)
    facts: dict[tuple[str, str, str], float] = field(default_factory=dict)
    fact_relations: dict[tuple[str, str, str], _Relation] = field(default_factory=dict)


# --- input checks ------------------------------------------------------------------------------


def _check_int(value: int, *, name: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValidationError(
            f"{name} must be between {low} and {high}; got {value!r}.",
            code=f"invalid_{name}",
            hint=f"Send {name} from {low} to {high}.",
        )
    return value


def _check_mode(mode: str) -> Mode:
    if mode not in MODES:
        raise ValidationError(
            f"mode must be one of {', '.join(MODES)}; got {str(mode)[:40]!r}.",
            code="invalid_mode",
            hint="Send mode passages, hybrid or graph.",
        )
    return mode  # type: ignore[return-value]


def _check_graphs(*, actor: User, graphs: Sequence[Graph]) -> list[Graph]:
    """Only graphs the actor may read (own, world-scope, the World Graph); a foreign private one is NotFound."""
    checked: list[Graph] = []
    for graph in graphs:
        if graph.owner_id != actor.pk and graph.scope != Scope.WORLD:
            raise NotFound(
                f"No graph with id {str(graph.id)[:80]!r}.",
                code="graph_not_found",
                hint="List your graphs with GET /api/v1/graphs/ (or the list_graphs tool).",
            )
        if graph.id not in {g.id for g in checked}:
            checked.append(graph)
    return checked


def _origin(*, actor: User, graph: Graph) -> Origin:
    return "private" if graph.owner_id == actor.pk and not graph.is_world else "world"


# --- fusion and linking ------------------------------------------------------------------------


def rrf(lists: Sequence[Sequence[str]], *, k: int = RRF_K) -> dict[str, float]:
    """Reciprocal rank fusion of ranked id lists (duplicates within a list count once)."""
    scores: dict[str, float] = {}
    for ranked in lists:
        seen: set[str] = set()
        for item in ranked:
            if item in seen:
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + len(seen))
    return scores


_EDGE_PUNCT = "?.,!;:\"'“”‘’«»()[]{}"


def _without_possessive(name: str) -> str:
    return name[:-2] if name.endswith(("'s", "’s")) else name


def _as_written(span: str) -> str:
    """A name as a text writes it: surrounding punctuation and a trailing possessive dropped, the closing
    bracket of a qualifier kept ("Kadal (1968 film)?" -> "Kadal (1968 film)")."""
    name = _without_possessive(span.strip(_EDGE_PUNCT)).strip(_EDGE_PUNCT)  # a bare apostrophe went with the edge
    if "(" in name and name.count("(") == name.count(")") + 1 and span[span.index(name) + len(name) :].startswith(")"):
        name += ")"
    return name


def question_keys(question: str, *, max_n: int = MAX_NGRAM) -> list[str]:
    """Normalised word n-grams of the question (1..max_n words, longest first), the keys exact entity linking
    tries: words alone ("walker texas ranger") and as written, inner punctuation kept and a possessive dropped
    ("Walker, Texas Ranger's" -> "walker, texas ranger" and "walker texas ranger"), so a name with a comma or an apostrophe-s still links."""
    words = re.findall(r"[^\W_](?:[^\s]*[^\W_])?", question)
    tokens = question.split()
    keys: list[str] = []

    def add(raw: str) -> None:
        key = normalize_name(raw)
        if len(key) >= 2 and key not in keys:
            keys.append(key)

    for n in range(min(max_n, max(len(words), len(tokens))), 0, -1):
        for start in range(len(words) - n + 1):
            add(_without_possessive(" ".join(words[start : start + n])))
        for start in range(len(tokens) - n + 1):
            add(_as_written(" ".join(tokens[start : start + n])))
    return keys[:400]


def _top(scores: dict[str, float], n: int) -> list[str]:
    return sorted(scores, key=lambda key: (-scores[key], key))[:n]


# --- the search paths (one graph) --------------------------------------------------------------


def passages_search(*, graph: Graph, text_query: str, vector: list[float], k: int) -> dict[str, float]:
    """Chunks by full text and by vector, directly over chunks, fused: chunk id -> RRF score."""
    text_hits = store.store_chunk_text_hits(graph.store_name, text_query=text_query, k=k)
    vector_hits = store.store_chunk_vector_hits(graph.store_name, vector=vector, k=k, vector_k=k + VECTOR_OVERFETCH)
    return rrf([[c for c, _ in text_hits], [c for c, _ in vector_hits]])


def entities_link(*, graph: Graph, question: str, text_query: str, vector: list[float], k: int) -> dict[str, float]:
    """Entities by exact name or alias (question n-grams), full text and vector, fused: entity id -> score.

    Exact matches count twice: a name the question spells out is the strongest link there is."""
    exact = store.store_entity_key_hits(graph.store_name, keys=question_keys(question), limit=k)
    lists = store.store_search_text_lists(graph.store_name, text_query=text_query, k=k, chunks=False)
    lists.update(
        store.store_search_vector_lists(
            graph.store_name, vector=vector, k=k, vector_k=k + VECTOR_OVERFETCH, chunks=False
        )
    )
    return rrf(
        [
            exact,
            exact,
            [e for e, _, _ in lists.get("entity_text", [])],
            [e for e, _, _ in lists.get("entity_vector", [])],
        ]
    )


def graph_walk(*, graph: Graph, seeds: Sequence[str], hops: int, cap: int = WALK_CAP) -> list[_Relation]:
    """Relations within `hops` of the seeds over typed relation edges only; each hop gets cap // hops
    relations at most (a busy first hop cannot crowd out deeper ones) and prefers edges between seeds."""
    hops = _check_int(hops, name="hops", low=1, high=MAX_HOPS)
    share = max(1, cap // hops)
    frontier = list(dict.fromkeys(seeds))
    expanded: list[str] = []  # entities whose edges an earlier hop already considered
    relations: list[_Relation] = []
    for hop in range(1, hops + 1):
        rows = store.store_walk_hop(graph.store_name, frontier=frontier, hits=seeds, visited=expanded, limit=share)
        expanded.extend(frontier)
        reached: list[str] = []
        for row in rows:
            relations.append(_relation(row, hop=hop))
            if row["reached"] not in reached and row["reached"] not in expanded:
                reached.append(row["reached"])
        frontier = reached
        if not frontier:
            break
    unique: dict[tuple[str, str, str], _Relation] = {}
    for relation in relations:
        unique.setdefault((relation.source_id, relation.type, relation.target_id), relation)
    return list(unique.values())


def _relation(row: dict[str, Any], *, hop: int) -> _Relation:
    return _Relation(
        source_id=row["source_id"],
        source=row["source"],
        type=row["type"],
        target_id=row["target_id"],
        target=row["target"],
        strength=row["strength"],
        chunk_ids=row["chunk_ids"],
        document_ids=row["document_ids"],
        contributors=[int(c) for c in row["contributors"]],
        hop=hop,
    )


def personalized_pagerank(
    n: int,
    edges: Sequence[tuple[int, int, float]],
    reset: np.ndarray,
    *,
    damping: float = PPR_DAMPING,
    iterations: int = PPR_ITERATIONS,
) -> np.ndarray:
    """PPR over an undirected weighted graph of n nodes (power iteration on a scipy sparse matrix);
    dangling mass returns to the reset distribution."""
    if n == 0 or reset.sum() <= 0:
        return np.zeros(n)
    rows = np.array([e[0] for e in edges], dtype=np.int64)
    cols = np.array([e[1] for e in edges], dtype=np.int64)
    weights = np.array([e[2] for e in edges], dtype=np.float64)
    matrix = sparse.coo_matrix((weights, (rows, cols)), shape=(n, n)).tocsr()
    matrix = (matrix + matrix.T).tocsr()
    out = np.asarray(matrix.sum(axis=1)).ravel()
    inverse = np.divide(1.0, out, out=np.zeros_like(out), where=out > 0)
    transition = (sparse.diags(inverse) @ matrix).T.tocsr()
    dangling = out == 0
    start = reset / reset.sum()
    rank = start.copy()
    for _ in range(iterations):
        following = transition @ rank + rank[dangling].sum() * start
        updated = (1 - damping) * start + damping * following
        if np.abs(updated - rank).sum() < 1e-9:
            return np.asarray(updated)
        rank = updated
    return np.asarray(rank)


def name_spans(text: str, *, max_n: int = MAX_NGRAM, limit: int = NAME_SPANS_PER_PASSAGE) -> list[str]:
    """Normalised keys of the names a passage writes: runs of 1..max_n words that start and end on a capitalised
    word or a number ("Walker, Texas Ranger", "Gloria in D Major", "1982"), the possessive dropped. Graph mode
    links a passage to every entity so named, beside what extraction found (which may have cut the name
    differently: "jazz musician Charles" for "Charles"). Scripts without case give no spans; their links are
    extraction's alone."""
    tokens = text.split()
    stripped = [token.strip(_EDGE_PUNCT) for token in tokens]
    ends = [word[:1].isupper() or word[:1].isdigit() for word in stripped]
    keys: dict[str, None] = {}
    for start, first in enumerate(tokens):
        if not (stripped[start][:1].isupper() or first[:1].isdigit()):
            continue
        for end in range(start, min(start + max_n, len(tokens))):
            if not ends[end]:
                continue
            key = normalize_name(_as_written(" ".join(tokens[start : end + 1])))
            if len(key) >= 3 and key not in keys:
                keys[key] = None
                if len(keys) >= limit:
                    return list(keys)
    return list(keys)


def title_keys(title: str) -> list[str]:
    """The keys a passage may name a document's title by: the title, and for a disambiguated title
    ("William Clemens (film director)", "Whispers (Corina song)") also the bare name before the qualifier."""
    keys = [key] if (key := normalize_name(title)) else []
    if (bare := normalize_name(title_bare(title))) and bare not in keys:
        keys.append(bare)
    return keys


def _damp_same_source(scores: dict[str, float], titles: dict[str, tuple[str, str]]) -> dict[str, float]:
    """Passage scores with each source's passages past its first SAME_SOURCE_FREE damped (see the constants);
    a source is a document title (normalised), or the document itself when untitled."""
    seen: dict[str, int] = {}
    damped: dict[str, float] = {}
    for cid in sorted(scores, key=lambda c: (-scores[c], c)):
        document_id, title = titles.get(cid, (cid, ""))
        source = normalize_name(title) or document_id
        extra = seen.get(source, 0) - SAME_SOURCE_FREE + 1
        seen[source] = seen.get(source, 0) + 1
        damped[cid] = scores[cid] * (SAME_SOURCE_DAMP**extra if extra > 0 else 1.0)
    return damped


def _graph_rank(*, read: _GraphRead, question: str, dense: list[tuple[str, float]]) -> None:
    """Mode graph for one graph (HippoRAG-style): link the names the question spells out to entity names, pull
    the bounded subgraph of passages and names around them and around the top dense passages, rank it by
    Personalized PageRank and fill read.passages / entities / facts.

    Nodes are passages and entity *names* (same-named entities of different types are one node); a passage is
    tied to each name it mentions (by extraction, or by writing it: name_spans) with weight 1/log(2 + number of
    passages naming it), so a rare name binds strongly. The reset mass goes to the linked names, each by its
    specificity (1/passages naming it), and a share to the dense hits by similarity."""
    store_name = read.graph.store_name
    # Keys of function words alone ("who", "where was") would link the question to titles like "Where Was I".
    keys = [k for k in question_keys(question) if not all(w in STOPWORDS for w in re.findall(r"\w+", k))]
    found = store.store_alias_names(store_name, keys=keys, limit=MAX_NGRAM * 4, per_key=ALIAS_NAMES)
    names = store.store_name_chunks(
        store_name, keys=[*keys, *(n for linked in found.values() for n in linked)], per_name=PER_ENTITY_CHUNKS
    )
    # A key that is a name links to that name alone ("Paris" is the city, not "Paris (film)", whose alias it is);
    # a key that is only an alias links to every name that has it, up to ALIAS_NAMES ("III" -> each album titled
    # "III (...)"), and PPR sorts out which one the question means.
    aliases = [name for key, linked in found.items() if key not in names for name in linked]
    seeds = [k for k in dict.fromkeys([*keys, *aliases]) if k in names]
    dense_hits = dense[:PPR_PASSAGE_SEEDS]
    ring = list(dict.fromkeys([*(c for c, _ in dense_hits), *(c for k in seeds for c in names[k][0])]))
    pending_texts = _pool.submit(store.store_chunks, store_name, ring)  # overlaps the mentions read
    mentions = store.store_chunk_mention_names(store_name, chunk_ids=ring)
    texts = pending_texts.result()
    written = {cid: name_spans(texts[cid]["text"]) for cid in ring if cid in texts}
    wanted = [k for _, k in mentions] + [k for spans in written.values() for k in spans]
    names.update(
        store.store_name_chunks(
            store_name,
            keys=[k for k in dict.fromkeys(wanted) if k not in names][:MAX_RING_NAMES],
            per_name=PER_ENTITY_CHUNKS,
        )
    )
    pairs: set[tuple[str, str]] = set(mentions)
    pairs.update((cid, k) for cid, spans in written.items() for k in spans if k in names)
    for key, (cids, _total, _eids) in names.items():  # the seeds' passages and the ring names' passages
        pairs.update((cid, key) for cid in cids)
    frequency = {key: max(1, total) for key, (_cids, total, _eids) in names.items()}
    for _, key in pairs:
        frequency.setdefault(key, 1)
    nodes: dict[str, int] = {}

    def node(key: str) -> int:
        return nodes.setdefault(key, len(nodes))

    edges = [(node("c:" + cid), node("n:" + key), 1.0 / math.log(2.0 + frequency[key])) for cid, key in sorted(pairs)]
    # A passage that names a document's title is tied to that document's passages directly (HippoRAG's
    # passage-to-passage links): "directed by James Fargo" leads one step to the passage titled "James Fargo".
    titles = {cid: (row["document_id"], row["title"]) for cid, row in texts.items()}  # the ring's, read above
    titles.update(store.store_chunk_titles(store_name, sorted({cid for cid, _ in pairs} - set(titles))))
    titled: dict[str, list[str]] = {}
    for cid, (_document_id, title) in titles.items():
        for title_key in title_keys(title):
            titled.setdefault(title_key, []).append(cid)
    for cid, key in sorted(pairs):
        document_id = titles.get(cid, ("", ""))[0]
        targets = [other for other in titled.get(key, ()) if titles[other][0] != document_id]
        for other in targets:
            edges.append((node("c:" + cid), node("c:" + other), PPR_TITLE_LINK / len(targets)))
    for cid, _ in dense_hits:
        node("c:" + cid)
    reset = np.zeros(len(nodes))
    specificity = {k: 1.0 / frequency[k] for k in seeds}
    entity_mass = sum(specificity.values()) or 1.0
    passage_mass = sum(max(score, 0.0) for _, score in dense_hits) or 1.0
    passage_share = PPR_PASSAGE_SHARE if seeds else 1.0
    for key in seeds:
        reset[node("n:" + key)] += (1.0 - passage_share) * specificity[key] / entity_mass
    for cid, score in dense_hits:
        reset[nodes["c:" + cid]] += passage_share * max(score, 0.0) / passage_mass
    rank = personalized_pagerank(len(nodes), edges, reset)
    for key, index in nodes.items():
        mass = float(rank[index])
        if mass <= 0:
            continue
        if key.startswith("c:"):
            read.passages[key[2:]] = mass
        else:
            for eid in names.get(key[2:], ([], 0, []))[2]:
                read.entities[eid] = max(read.entities.get(eid, 0.0), mass)
    read.passages = _damp_same_source(read.passages, titles)
    # Facts: the relations between the entities that carry the most mass (the weaker end bounds a fact's mass),
    # one read instead of a walk: what PPR reached is what the facts may join.
    heavy = sorted(read.entities, key=lambda eid: (-read.entities[eid], eid))[:FACT_ENTITIES]
    relations = [_relation(row, hop=1) for row in store.store_relations_among(store_name, ids=heavy, limit=WALK_CAP)]
    for relation in relations:
        mass = min(read.entities.get(relation.source_id, 0.0), read.entities.get(relation.target_id, 0.0))
        triple = relation.triple
        if mass > read.facts.get(triple, 0.0):
            read.facts[triple] = mass
            read.fact_relations[triple] = relation


# --- entity search (search_entities: REST, MCP, the web search page) ---------------------------

# Overlaps a search's FalkorDB reads (store calls only: no ORM in these threads).
_pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="graph-search")


def _renew_pool() -> None:
    """A forked child (Celery prefork, gunicorn) gets a fresh pool: the parent's threads do not exist there."""
    global _pool
    _pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="graph-search")


os.register_at_fork(after_in_child=_renew_pool)


class EntitySearch(TypedDict):
    hits: list[EntityHit]
    # Accounts whose World Graph knowledge is in the hits (the asking user included; billing drops them).
    contributor_ids: list[int]


def entity_search(
    *, user: User, query: str, n_results: int = 10, graph_id: str | None = None, scope: Scope
) -> EntitySearch:
    """Hybrid entity search: full-text + vector over entities and the chunks that mention them,
    fused by reciprocal rank; relevance is 0..1 within the response (the best hit is 1.0).
    Also returns the ids of the accounts whose World Graph knowledge the hits carry.

    Raises ValidationError (empty/too long query, n_results outside 1..100), NotFound, Conflict
    (graph built with another embedder), ServiceUnavailable (graph store down)."""
    text = _check_query(query)
    n_results = _check_n_results(n_results)
    graphs = search_graphs_for_user(user=user, scope=Scope(scope), graph_id=graph_id)
    if not graphs:
        return {"hits": [], "contributor_ids": []}
    embedders = [embedder_check(graph=graph) for graph in graphs]
    embedder = embedders[0]
    text_query = store.fulltext_query(text)
    k = min(MAX_N_RESULTS, max(20, n_results * 2))
    # The four reads of each graph run on the pool, overlapping (FalkorDB serves reads on several
    # threads); the full-text ones start while this thread embeds the query.
    futures: dict[str, list[Future[dict[str, list[tuple[str, float, str]]]]]] = {g.id: [] for g in graphs}
    for graph in graphs:
        futures[graph.id].append(
            _pool.submit(store.store_search_text_lists, graph.store_name, text_query=text_query, k=k, chunks=False)
        )
        futures[graph.id].append(
            _pool.submit(store.store_search_text_lists, graph.store_name, text_query=text_query, k=k, entities=False)
        )
    vector = [float(x) for x in embedder.embed_one(text)]
    for graph in graphs:
        for entities_only in (True, False):
            futures[graph.id].append(
                _pool.submit(
                    store.store_search_vector_lists,
                    graph.store_name,
                    vector=vector,
                    k=k,
                    vector_k=k + VECTOR_OVERFETCH,
                    chunks=not entities_only,
                    entities=entities_only,
                )
            )
    per_graph: dict[str, dict[str, list[tuple[str, float, str]]]] = {}
    for gid, pending in futures.items():
        merged: dict[str, list[tuple[str, float, str]]] = {}
        for future in pending:
            merged.update(future.result())
        per_graph[gid] = merged
    scores, passages, direct = _fuse(per_graph)
    # The same entity found in the World Graph and in one of the user's world-scope graphs: one hit.
    world_ids = {entity_id for (gid, entity_id) in scores if gid == WORLD_GRAPH_ID}
    ranked = sorted(
        (key for key in scores if key[0] == WORLD_GRAPH_ID or key[1] not in world_ids),
        key=lambda key: (-scores[key], key[1]),
    )[:n_results]
    if not ranked:
        return {"hits": [], "contributor_ids": []}
    by_graph: dict[str, list[str]] = {}
    for gid, entity_id in ranked:
        by_graph.setdefault(gid, []).append(entity_id)
    graph_rows = {graph.id: graph for graph in graphs}
    details: dict[tuple[str, str], dict[str, Any]] = {}
    for gid, ids in by_graph.items():
        found = store.store_entities(graph_rows[gid].store_name, ids)
        lacking = [eid for eid in ids if eid in found and not found[eid]["description"] and (gid, eid) not in passages]
        fallback = store.store_entity_passages(graph_rows[gid].store_name, lacking) if lacking else {}
        for eid, row in found.items():
            row["fallback"] = fallback.get(eid, "")
            details[(gid, eid)] = row
    top = scores[ranked[0]]
    hits: list[EntityHit] = []
    contributors: set[int] = set()
    for key in ranked:
        detail = details.get(key)
        if detail is None:
            continue  # deleted between the two reads
        row = detail
        gid, entity_id = key
        if direct.get(key) and row["description"]:
            context = row["description"]
        else:
            context = passages.get(key) or row["description"] or row["fallback"]
        hits.append(
            {
                "id": entity_id,
                "name": row["name"],
                "type": row["type"],
                "graph_id": gid,
                "graph_name": graph_rows[gid].name,
                "relevance": round(scores[key] / top, 3),
                "context": snippet(context, text),
            }
        )
        if gid == WORLD_GRAPH_ID:
            contributors.update(int(c) for c in row["contributors"])
    return {"hits": hits, "contributor_ids": sorted(contributors)}


# --- the Retrieve flow -------------------------------------------------------------------------


def retrieve(
    *,
    actor: User,
    graphs: Sequence[Graph],
    question: str,
    mode: str = "hybrid",
    top_k: int = 10,
    hops: int = 2,
    budget: int = DEFAULT_BUDGET,
) -> RetrievalResult:
    """Evidence for question from graphs (each must be readable by actor), best first within budget
    characters. Pure read: the caller records result.contributor_ids with billing.

    Raises ValidationError (empty/too long question, mode, top_k 1..100, hops 1..3, budget),
    NotFound (a graph actor may not read), Conflict (graph built with another embedder), ServiceUnavailable."""
    text = _check_query(question)
    checked_mode = _check_mode(mode)
    top_k = _check_int(top_k, name="top_k", low=1, high=MAX_TOP_K)
    hops = _check_int(hops, name="hops", low=1, high=MAX_HOPS)
    budget = _check_int(budget, name="budget", low=MIN_BUDGET, high=MAX_BUDGET)
    readable = _check_graphs(actor=actor, graphs=graphs)
    if not readable:
        return RetrievalResult(mode=checked_mode, items=[], contributor_ids=[])
    embedder = [embedder_check(graph=graph) for graph in readable][0]
    vector = [float(x) for x in embedder.embed_one(text)]
    text_query = store.fulltext_query(text)
    k = min(MAX_TOP_K, max(20, top_k * 2))
    reads: list[_GraphRead] = []
    for graph in readable:
        read = _GraphRead(graph=graph)
        if checked_mode == "graph":
            dense = store.store_chunk_vector_hits(
                graph.store_name, vector=vector, k=PPR_PASSAGE_SEEDS, vector_k=PPR_PASSAGE_SEEDS + VECTOR_OVERFETCH
            )
            _graph_rank(
                read=read, question=text, dense=dense
            )  # PPR decides how far it reaches; hops bound hybrid's walk
        else:
            read.passages = passages_search(graph=graph, text_query=text_query, vector=vector, k=k)
            if checked_mode == "hybrid":
                read.entities = entities_link(graph=graph, question=text, text_query=text_query, vector=vector, k=k)
                seeds = _top(read.entities, top_k)
                read.relations = graph_walk(graph=graph, seeds=seeds, hops=hops) if seeds else []
        reads.append(read)
    return _assemble(actor=actor, reads=reads, mode=checked_mode, question=text, top_k=top_k, budget=budget)


def retrieve_for_user(
    *,
    actor: User,
    question: str,
    scope: Scope,
    graph_id: str | None = None,
    mode: str = "hybrid",
    top_k: int = 10,
    hops: int = 2,
    budget: int = DEFAULT_BUDGET,
) -> RetrievalResult:
    """retrieve over the graphs a search of scope (or the one graph_id) reads, by the selectors' scope rules."""
    graphs = search_graphs_for_user(user=actor, scope=Scope(scope), graph_id=graph_id)
    return retrieve(actor=actor, graphs=graphs, question=question, mode=mode, top_k=top_k, hops=hops, budget=budget)


def _assemble(
    *, actor: User, reads: list[_GraphRead], mode: Mode, question: str, top_k: int, budget: int
) -> RetrievalResult:
    contributors: set[int] = set()
    ranked_passages = sorted(
        ((score, r, cid) for r in reads for cid, score in r.passages.items()), key=lambda t: (-t[0], t[2])
    )[:top_k]
    # Facts cite their passages: in graph mode the passages a top fact was extracted from come along.
    fact_rows = sorted(
        ((score, r, triple) for r in reads for triple, score in r.facts.items()), key=lambda t: (-t[0], t[2])
    )
    seen_triples: set[tuple[str, str, str]] = set()
    facts: list[tuple[float, _GraphRead, _Relation]] = []
    for score, read, triple in fact_rows:
        if triple in seen_triples:
            continue  # one flat fact per exact triple, whichever graph holds it
        seen_triples.add(triple)
        facts.append((score, read, read.fact_relations[triple]))
        if len(facts) >= top_k:
            break
    wanted: dict[str, set[str]] = {r.graph.id: {cid for s, rr, cid in ranked_passages if rr is r} for r in reads}
    for _, read, relation in facts:
        wanted[read.graph.id].update(relation.chunk_ids[:1])
    for read in reads:
        for relation in read.relations:
            wanted[read.graph.id].update(relation.chunk_ids[:1])
    chunk_rows = {r.graph.id: store.store_chunks(r.graph.store_name, sorted(wanted[r.graph.id])) for r in reads}
    items: list[Evidence] = []

    def provenance(read: _GraphRead, chunk_id: str | None) -> dict[str, object]:
        row = chunk_rows[read.graph.id].get(chunk_id or "")
        if row is None:
            return {}
        return {
            "document_id": row["document_id"],
            "source": row["title"] or row["filename"],
            "url": row["url"],
            "page": row["page"],
            "chunk_id": chunk_id,
        }

    for score, read, relation in facts:
        items.append(
            _relation_item(actor=actor, read=read, relation=relation, kind="fact", score=score, prov=provenance)
        )
    passage_items: list[Evidence] = []
    passage_keys = [(r, cid) for _, r, cid in ranked_passages]
    for _, read, relation in facts:
        if relation.chunk_ids and (read, relation.chunk_ids[0]) not in passage_keys:
            passage_keys.append((read, relation.chunk_ids[0]))
    for read, cid in passage_keys:
        row = chunk_rows[read.graph.id].get(cid)
        if row is None:
            continue  # deleted between the reads
        mentions = tuple(
            sorted({e for rel in read.relations if cid in rel.chunk_ids for e in (rel.source_id, rel.target_id)})
        )
        passage_items.append(
            Evidence(
                kind="passage",
                text=snippet(row["text"], question, limit=PASSAGE_CHARS),
                graph_id=read.graph.id,
                score=read.passages.get(cid, 0.0),
                origin=_origin(actor=actor, graph=read.graph),
                document_id=row["document_id"],
                source=row["title"] or row["filename"],
                url=row["url"],
                page=row["page"],
                chunk_id=cid,
                entity_ids=mentions,
                chunk_ids=(cid,),
                document_ids=(row["document_id"],) if row["document_id"] else (),
            )
        )
        if read.graph.id == WORLD_GRAPH_ID and row["contributor"] is not None:
            contributors.add(int(row["contributor"]))
    # Passages and facts alternate, best first: a consumer that keeps only the first n items (chat hands the
    # model 12) gets the top passages and the facts that join them, not facts alone.
    fact_items, items = items, []
    for index in range(max(len(fact_items), len(passage_items))):
        items.extend(passage_items[index : index + 1])
        items.extend(fact_items[index : index + 1])
    if mode != "passages":
        ranked_entities = sorted(
            ((score, r, eid) for r in reads for eid, score in r.entities.items()), key=lambda t: (-t[0], t[2])
        )[:top_k]
        details = {
            r.graph.id: store.store_entities(r.graph.store_name, [eid for _, rr, eid in ranked_entities if rr is r])
            for r in reads
        }
        for score, read, eid in ranked_entities:
            row = details[read.graph.id].get(eid)
            if row is None:
                continue
            body = f"{row['name']} ({row['type']})" + (f": {row['description']}" if row["description"] else "")
            items.append(
                Evidence(
                    kind="entity",
                    text=body,
                    graph_id=read.graph.id,
                    score=score,
                    origin=_origin(actor=actor, graph=read.graph),
                    entity_ids=(eid,),
                )
            )
            if read.graph.id == WORLD_GRAPH_ID:
                contributors.update(int(c) for c in row["contributors"])
        relations = sorted(
            ((rel.hop, -rel.strength, r, rel) for r in reads for rel in r.relations), key=lambda t: (t[0], t[1])
        )
        for hop, _, read, relation in relations:
            items.append(
                _relation_item(
                    actor=actor,
                    read=read,
                    relation=relation,
                    kind="relation",
                    score=1.0 / (RRF_K + hop),
                    prov=provenance,
                )
            )
    for _, read, relation in facts:
        if read.graph.id == WORLD_GRAPH_ID:
            contributors.update(relation.contributors)
    for read in reads:
        if read.graph.id == WORLD_GRAPH_ID:
            for relation in read.relations:
                contributors.update(relation.contributors)
    kept: list[Evidence] = []
    used = 0
    truncated = False
    for item in items:
        if used + len(item.text) > budget:
            truncated = True
            continue  # a shorter item further down may still fit
        used += len(item.text)
        kept.append(item)
    return RetrievalResult(mode=mode, items=kept, contributor_ids=sorted(contributors), truncated=truncated)


def _relation_item(*, actor: User, read: _GraphRead, relation: _Relation, kind: Kind, score: float, prov) -> Evidence:  # type: ignore[no-untyped-def]
    subject, predicate, obj = relation.triple
    first = relation.chunk_ids[0] if relation.chunk_ids else None
    where = prov(read, first)
    return Evidence(
        kind=kind,
        text=f"{subject} {predicate} {obj}",
        graph_id=read.graph.id,
        score=score,
        origin=_origin(actor=actor, graph=read.graph),
        document_id=where.get("document_id") or (relation.document_ids[0] if relation.document_ids else None),
        source=str(where.get("source") or ""),
        url=where.get("url"),  # type: ignore[arg-type]
        page=where.get("page"),  # type: ignore[arg-type]
        chunk_id=first,
        entity_ids=(relation.source_id, relation.target_id),
        chunk_ids=tuple(relation.chunk_ids),
        document_ids=tuple(relation.document_ids),
        triple=relation.triple,
    )
