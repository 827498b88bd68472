"""Synonym edges for graph mode (HippoRAG 2's synonymy edges, drawn at query time around the seeds): the names whose
entity embeddings lie within SYNONYM_MIN cosine of a seed's are tied to it, so a question naming "NYC" reaches the
passages that write "New York City" though neither is the other's alias."""

from __future__ import annotations

from collections.abc import Sequence

from exograph.graphs import store
from exograph.graphs.retrieval.types import SYNONYM_K, SYNONYM_MIN


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
