"""Where a World Graph search's time goes, read-only against a running `make bench-scale` server (issue 29).

    nice -n 19 .venv/bin/python bench/scale_profile.py /tmp/exo-bench-scale-XXXX/falkordb.sock [queries]

1. parts: each read of `search_entities` alone, one after the other (the service overlaps them), and the query
   embedding, with how many entity names the full-text query matches;
2. A/B: the search path of `entity_search` (the four store reads on the search pool while the query is embedded,
   the fusion, the entity details), with the entity full-text read in its old form (one OR query: every match
   handed over and sorted) or the current one (store.reads._entity_text_hits), alternating query by query;
   p50/p95 of each, the load average beside, and what each form puts in the top 10 (the exact name's rank for the
   queries that are names, query words per hit, the overlap of the two top 10s).

Query texts are bench-scale's (names, 'word noun', 'how does word noun affect word systems'); only GRAPH.RO_QUERY
reads are sent. Nothing is written to bench/results: the figures go to stdout.
"""

from __future__ import annotations

import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SOCKET = sys.argv[1] if len(sys.argv) > 1 else ""
N_QUERIES = int(sys.argv[2]) if len(sys.argv) > 2 else 100
STORE = os.environ.get("BENCH_SCALE_STORE", "exo:world")
SEED = 29


def main() -> None:
    if not SOCKET:
        raise SystemExit(__doc__)
    os.environ["FALKORDB_URL"] = f"unix://{SOCKET}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "exograph.settings")
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-secret-key-" + "x" * 40)
    os.environ["EXOGRAPH_VAR_DIR"] = tempfile.mkdtemp(prefix="exo-scale-profile-")
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ.pop("DATABASE_URL", None)
    import django

    django.setup()
    from bench.common import percentile
    from bench.graph import NOUNS, WORDS
    from bench.scale import entity_names, load_average
    from exograph.graphs import store
    from exograph.graphs.embeddings import get_embedder
    from exograph.graphs.retrieval.paths import search_pool
    from exograph.graphs.selectors.search import VECTOR_OVERFETCH, _fuse
    from exograph.graphs.store import reads

    names = entity_names(100_000)  # loaded first, so every size holds them
    name_set = set(names)
    rng = random.Random(SEED)
    queries = []
    for _ in range(N_QUERIES):
        kind = rng.random()
        if kind < 0.4:
            queries.append(names[rng.randrange(len(names))])
        elif kind < 0.8:
            queries.append(f"{rng.choice(WORDS)} {rng.choice(NOUNS)}")
        else:
            queries.append(f"how does {rng.choice(WORDS)} {rng.choice(NOUNS)} affect {rng.choice(WORDS)} systems")
    embedder = get_embedder()
    embedder.embed_one("warm up")
    k = 20
    current = reads._entity_text_hits

    def old_form(store_name: str, text_query: str, k: int) -> list[tuple[str, float]]:
        return reads._entity_text(store_name, text_query, k) if text_query else []

    def stats(values: list[float]) -> str:
        return f"p50 {percentile(values, 50):6.2f} p95 {percentile(values, 95):6.2f} ms"

    count = store.ro_query(STORE, "MATCH (e:Entity) RETURN count(e)")[0][0]
    print(f"{STORE}: {count:,} entities; {N_QUERIES} queries; load {load_average()}")

    # 1. parts, alone
    parts: dict[str, list[float]] = {}
    matched: list[float] = []

    def timed(label: str, fn: Any) -> Any:
        t0 = time.perf_counter()
        out = fn()
        parts.setdefault(label, []).append((time.perf_counter() - t0) * 1000)
        return out

    for q in queries:
        tq = store.fulltext_query(q)
        vector = timed("query embedding", lambda q=q: [float(x) for x in embedder.embed_one(q)])
        timed("entity full text, old form", lambda tq=tq: old_form(STORE, tq, k))
        timed("entity full text, current", lambda tq=tq: current(STORE, tq, k))
        timed("chunk full text", lambda tq=tq: store.store_search_text_lists(STORE, text_query=tq, k=k, entities=False))
        vec = {"vector": vector, "k": k, "vector_k": k + VECTOR_OVERFETCH}
        found = timed("entity vector", lambda vec=vec: store.store_search_vector_lists(STORE, chunks=False, **vec))
        timed("chunk vector", lambda vec=vec: store.store_search_vector_lists(STORE, entities=False, **vec))
        ids = [e for e, _, _ in found.get("entity_vector", [])][:10]
        timed("entity details", lambda ids=ids: store.store_entities(STORE, ids))
        rows = store.ro_query(
            STORE,
            "CALL db.idx.fulltext.queryNodes('Entity', $q) YIELD node RETURN count(node)",
            {"q": f"@name|terms:({tq})"},
        )
        matched.append(int(rows[0][0]) if rows else 0)
    print(f"parts, each alone (load {load_average()}):")
    for label, values in parts.items():
        print(f"  {label:28s} {stats(values)}")
    print(f"  names the full-text query matches: p50 {percentile(matched, 50):,.0f} p95 {percentile(matched, 95):,.0f}")

    # 2. A/B, the search path
    def search(q: str, form: Any) -> list[str]:
        reads._entity_text_hits = form
        tq = store.fulltext_query(q)
        pool = search_pool()
        futures = [
            pool.submit(store.store_search_text_lists, STORE, text_query=tq, k=k, chunks=False),
            pool.submit(store.store_search_text_lists, STORE, text_query=tq, k=k, entities=False),
        ]
        vector = [float(x) for x in embedder.embed_one(q)]
        for entities_only in (True, False):
            futures.append(
                pool.submit(
                    store.store_search_vector_lists,
                    STORE,
                    vector=vector,
                    k=k,
                    vector_k=k + VECTOR_OVERFETCH,
                    chunks=not entities_only,
                    entities=entities_only,
                )
            )
        lists: dict[str, list[tuple[str, float, str]]] = {}
        for future in futures:
            lists.update(future.result())
        scores, _, _ = _fuse({"world": lists})
        ranked = sorted(scores, key=lambda key: (-scores[key], key[1]))[:10]
        details = store.store_entities(STORE, [e for _, e in ranked])
        return [details[e]["name"] for _, e in ranked if e in details]

    forms = {"old": old_form, "current": current}
    try:
        for q in queries[:5]:
            for form in forms.values():
                search(q, form)
        times: dict[str, list[float]] = {label: [] for label in forms}
        tops: dict[str, list[list[str]]] = {label: [] for label in forms}
        before = load_average()
        for i, q in enumerate(queries):
            for label in list(forms)[:: 1 if i % 2 == 0 else -1]:
                t0 = time.perf_counter()
                tops[label].append(search(q, forms[label]))
                times[label].append((time.perf_counter() - t0) * 1000)
    finally:
        reads._entity_text_hits = current
    print(f"search path, old and current entity full text alternating (load {before} -> {load_average()}):")
    for label in forms:
        exact = [
            top.index(q) + 1 if q in top else None for q, top in zip(queries, tops[label], strict=True) if q in name_set
        ]
        words = [
            sum(len(set(store.fulltext_query(q).split("|")) & set(n.casefold().split())) for n in top)
            / max(1, len(top))
            for q, top in zip(queries, tops[label], strict=True)
        ]
        print(
            f"  {label:8s} {stats(times[label])}; names asked {len(exact)}: at rank 1 {exact.count(1)}, "
            f"in the top 10 {sum(1 for r in exact if r)}; query words per top-10 hit {sum(words) / len(words):.2f}"
        )
    overlap = [len(set(a) & set(b)) / max(1, len(a)) for a, b in zip(tops["old"], tops["current"], strict=True)]
    print(f"  top-10 overlap old/current {sum(overlap) / len(overlap):.3f}")


if __name__ == "__main__":
    main()
