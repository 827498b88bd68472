"""Query-to-fact matching for graph mode (HippoRAG 2's recognition step, without its LLM filter): the relations
among the candidate subgraph's passages, each embedded as a short text (subject, predicate, object), scored against
the question's embedding; the entities of the best-matching facts become PPR seeds. A question that describes a
link in other words ("the studio behind ...") seeds the names that link joins, not only the names it spells out.

Facts are embedded at query time from the subgraph, not at ingest (which would embed every relation of every
document: more vectors than its entities); the vectors of fact texts seen before are kept per process."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from exograph.graphs import store
from exograph.graphs.embeddings import Embedder
from exograph.graphs.retrieval.types import (
    FACT_MATCH,
    FACT_MATCH_MIN,
    FACT_MATCH_POOL,
    FACT_MATCH_TYPED,
)

FACT_VECTOR_CACHE = 50_000  # fact texts whose vectors a process keeps (384 floats each: ~80 MB at most)

_cache: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
_cache_lock = threading.Lock()


def fact_text(subject: str, predicate: str, obj: str) -> str:
    """What a fact is embedded as: its three parts as words ("Acme Corporation acquire Borealis Labs"); a
    co-occurrence link (RELATED_TO) reads as the two names it joins."""
    verb = "" if predicate.upper() == "RELATED_TO" else predicate.lower().replace("_", " ")
    return " ".join(part for part in (subject, verb, obj) if part)


def fact_vectors(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """The unit vectors of texts (len(texts) x dimension), from the process cache where seen before."""
    keys = [(embedder.name, text) for text in texts]
    with _cache_lock:
        known = {key: _cache[key] for key in keys if key in _cache}
        for key in known:
            _cache.move_to_end(key)
    missing = list(dict.fromkeys(key for key in keys if key not in known))
    if missing:
        fresh = embedder.embed([text for _, text in missing])
        with _cache_lock:
            for key, vector in zip(missing, fresh, strict=True):
                known[key] = _cache[key] = np.asarray(vector, dtype=np.float32)
            while len(_cache) > FACT_VECTOR_CACHE:
                _cache.popitem(last=False)
    if not keys:
        return np.zeros((0, embedder.dimension), dtype=np.float32)
    return np.stack([known[key] for key in keys])


def fact_seeds(
    store_name: str, *, chunk_ids: Sequence[str], vector: Sequence[float], embedder: Embedder
) -> dict[str, float]:
    """Normalised entity name -> how far the best matched fact it is an end of stands above the pool's mean
    similarity: the FACT_MATCH relations among chunk_ids' entities (the first FACT_MATCH_POOL, the chunks in order)
    whose text lies nearest the question, at FACT_MATCH_MIN cosine or more. The margin, not the raw cosine: the
    subgraph's facts all share the question's own names, so their cosines sit close together, and what tells the
    link the question asks about is how far its fact stands out. Empty when off (FACT_MATCH 0)."""
    if FACT_MATCH <= 0 or not chunk_ids:
        return {}
    rows = store.store_chunk_facts(store_name, chunk_ids=chunk_ids, limit=FACT_MATCH_POOL, typed=bool(FACT_MATCH_TYPED))
    if not rows:
        return {}
    texts = [fact_text(subject, predicate, obj) for _, subject, predicate, obj, _ in rows]
    unique = list(dict.fromkeys(texts))
    scores = fact_vectors(embedder, unique) @ np.asarray(vector, dtype=np.float32)
    score_of = dict(zip(unique, (float(s) for s in scores), strict=True))
    # A lone fact has nothing to stand above: it weighs by its cosine.
    mean = float(np.mean([score_of[text] for text in texts])) if len(unique) > 1 else 0.0
    ranked = sorted(range(len(rows)), key=lambda i: (-score_of[texts[i]], texts[i]))
    seeds: dict[str, float] = {}
    matched: set[str] = set()
    for i in ranked:
        score = score_of[texts[i]]
        if score < FACT_MATCH_MIN or score <= mean or len(matched) >= FACT_MATCH:
            break
        matched.add(texts[i])
        source_key, _, _, _, target_key = rows[i]
        for key in (source_key, target_key):
            seeds[key] = max(seeds.get(key, 0.0), score - mean)
    return seeds
