"""Ranking maths: reciprocal rank fusion, Personalized PageRank (scipy sparse), same-source damping, the covering
order of the first passages."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from scipy import sparse

from exograph.graphs.retrieval.types import (
    PPR_DAMPING,
    PPR_ITERATIONS,
    SAME_SOURCE_DAMP,
    SAME_SOURCE_FREE,
)
from exograph.graphs.selectors.search import RRF_K
from exograph.graphs.types import normalize_name

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


def top(scores: dict[str, float], n: int) -> list[str]:
    return sorted(scores, key=lambda key: (-scores[key], key))[:n]


# --- the search paths (one graph) --------------------------------------------------------------


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


def damp_same_source(scores: dict[str, float], titles: dict[str, tuple[str, str]]) -> dict[str, float]:
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


def covering_order(
    scores: dict[str, float],
    words: Mapping[str, Sequence[str]],
    idf: Mapping[str, float],
    *,
    pool: int,
    weight: float,
) -> dict[str, float]:
    """scores with the first `pool` passages reordered greedily by what each adds to those before it: the best
    stays first; each next place goes to the passage of the most score x exp(weight x its novel share), the novel
    share being the idf of the question's words (idf: stemmed word -> weight) it writes (words: chunk id -> its
    stemmed words) and no chosen passage does, over the idf of them all. The pool keeps its scores, handed out in
    the new order (one that equals the one before it a hair under it, so the order holds); the passages after it are
    untouched. Ties keep the old order."""
    order = sorted(scores, key=lambda cid: (-scores[cid], cid))
    head = order[:pool]
    total = sum(idf.values())
    if len(head) < 2 or total <= 0 or weight <= 0:
        return scores
    present = {cid: {w for w in words.get(cid, ()) if w in idf} for cid in head}
    chosen = [head[0]]
    covered = set(present[head[0]])
    rest = head[1:]
    while rest:
        gains = {
            cid: scores[cid] * math.exp(weight * sum(idf[w] for w in present[cid] - covered) / total) for cid in rest
        }
        best = max(rest, key=lambda cid: gains[cid])  # max keeps the first of equals: the old order
        chosen.append(best)
        covered |= present[best]
        rest.remove(best)
    reordered = dict(scores)
    previous = math.inf
    for cid, score in zip(chosen, (scores[cid] for cid in head), strict=True):
        previous = reordered[cid] = min(score, math.nextafter(previous, 0.0))  # equal scores would lose the order
    return reordered
