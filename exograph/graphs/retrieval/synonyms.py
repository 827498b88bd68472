"""Synonym edges for graph mode (HippoRAG 2's synonymy edges, drawn at query time around the seeds): the names whose
entity embeddings lie within SYNONYM_MIN cosine of a seed's are tied to it, so a question naming "NYC" reaches the
passages that write "New York City" though neither is the other's alias."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from exograph.graphs import store
from exograph.graphs.retrieval.types import SYNONYM_K, SYNONYM_MIN, SYNONYM_SUBGRAPH_K


def synonym_names(store_name: str, seeds: dict[str, Sequence[str]]) -> list[tuple[str, str, float]]:
    """(seed key, other normalised name, cosine) for each seed (key -> its entity ids) and the SYNONYM_K entities
    nearest each of its entities, at SYNONYM_MIN or more; a pair once, at its best cosine."""
    owner = {eid: key for key, eids in seeds.items() for eid in eids}
    if SYNONYM_K <= 0 or not owner:
        return []
    best: dict[tuple[str, str], float] = {}
    for eid, other, similarity in store.store_entity_neighbours(store_name, ids=list(owner), k=SYNONYM_K):
        key = owner.get(eid)
        if key is None or not other or other == key or similarity < SYNONYM_MIN:
            continue
        pair = (key, other)
        best[pair] = max(best.get(pair, 0.0), similarity)
    return [(key, other, similarity) for (key, other), similarity in sorted(best.items())]


def subgraph_synonyms(store_name: str, names: Mapping[str, Sequence[str]]) -> list[tuple[str, str, float]]:
    """Synonym edges inside the whole query-time subgraph (HippoRAG 2 draws them over the graph at index time; here
    over the names PPR will walk): (name key, other name key, cosine) for each name (key -> its entity ids) and the
    SYNONYM_SUBGRAPH_K other names of the subgraph whose stored entity vectors lie nearest its own, at SYNONYM_MIN
    or more; a pair once (the lesser key first), at its cosine. No model runs: the vectors are ingest's."""
    if SYNONYM_SUBGRAPH_K <= 0 or len(names) < 2:
        return []
    vectors = store.store_entity_vectors(store_name, [eid for eids in names.values() for eid in eids])
    keys: list[str] = []
    rows: list[np.ndarray] = []
    for key, eids in sorted(names.items()):
        held = [np.asarray(vectors[eid], dtype=np.float32) for eid in eids if eid in vectors]
        if not held:
            continue
        mean = np.mean([v / (np.linalg.norm(v) or 1.0) for v in held], axis=0)
        norm = float(np.linalg.norm(mean))
        if norm > 0:
            keys.append(key)
            rows.append(mean / norm)
    if len(keys) < 2:
        return []
    matrix = np.stack(rows)
    similarity = matrix @ matrix.T
    np.fill_diagonal(similarity, -1.0)
    best: dict[tuple[str, str], float] = {}
    k = min(SYNONYM_SUBGRAPH_K, len(keys) - 1)
    nearest = np.argpartition(-similarity, k - 1, axis=1)[:, :k]
    for i, row in enumerate(nearest):
        for j in row:
            score = float(similarity[i, j])
            if score >= SYNONYM_MIN:
                pair = (keys[i], keys[j]) if keys[i] < keys[j] else (keys[j], keys[i])
                best[pair] = score
    return [(a, b, score) for (a, b), score in sorted(best.items())]
