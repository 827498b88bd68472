"""Query embedding latency of the local model: torch (sentence-transformers encode) vs ONNX Runtime.

`python bench/embedding.py`: 200 search-like queries through LocalEmbedder.embed_one on each path, in
interleaved rounds (torch, onnx, torch, onnx; the machine may be shared: both see the same load), after a
warm-up; also the largest difference between the two vectors of each query, and one ingest-sized batch
(EMBEDDING_BATCH_SIZE texts) on torch (what embed() runs) vs the same batch, padded, through the ONNX session.
Both embedders use the settings' thread counts (EMBEDDING_TORCH_THREADS=1 as in bench/graph.py unless set).
Results: bench/results/embedding.json and embedding.md.
"""

from __future__ import annotations

import json
import os
import platform
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import percentile  # noqa: E402

RESULTS = ROOT / "bench" / "results"
N_QUERIES = int(os.environ.get("BENCH_QUERIES", "200"))
ROUNDS = 2


def queries() -> list[str]:
    rng = random.Random(20261201)
    words = "quantum graph protein neural solar lattice enzyme orbital tensor volcanic marine spectral".split()
    out = []
    for i in range(N_QUERIES):
        kind = i % 3
        if kind == 0:
            out.append(f"{rng.choice(words)} {rng.choice(words)} model")
        elif kind == 1:
            out.append(f"Who was the director of film number {i} and where was he born in {1900 + i}?")
        else:
            out.append(" ".join(rng.choice(words) for _ in range(rng.randint(5, 40))))
    return out


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "exograph.settings")
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-secret-key-" + "x" * 40)
    os.environ.setdefault("EXOGRAPH_VAR_DIR", tempfile.mkdtemp(prefix="exo-bench-embedding-"))
    os.environ.setdefault("EXOGRAPH_LOG_LEVEL", "warning")
    os.environ.setdefault("EMBEDDING_TORCH_THREADS", "1")
    os.environ.pop("DATABASE_URL", None)
    import django

    django.setup()
    from django.conf import settings

    from exograph.graphs.embeddings import LocalEmbedder

    onnx = LocalEmbedder()
    onnx.load()
    assert onnx.query_runtime == "onnxruntime", "no ONNX export (see the log)"
    settings.EMBEDDING_ONNX = False
    torch_only = LocalEmbedder()
    torch_only.load()
    assert torch_only.query_runtime == "torch"

    texts = queries()
    for text in texts[:20]:  # warm-up
        onnx.embed_one(text)
        torch_only.embed_one(text)
    times: dict[str, list[float]] = {"torch": [], "onnxruntime": []}
    for _ in range(ROUNDS):
        for name, embedder in (("torch", torch_only), ("onnxruntime", onnx)):
            for text in texts:
                started = time.perf_counter()
                embedder.embed_one(text)
                times[name].append(1000 * (time.perf_counter() - started))
    diff = max(max(abs(a - b) for a, b in zip(onnx.embed_one(t), torch_only.embed_one(t), strict=True)) for t in texts)

    batch = [f"{text} {i}" for i, text in enumerate(texts)][: int(settings.EMBEDDING_BATCH_SIZE)]
    model = onnx._loaded()
    encoder = onnx._onnx
    assert encoder is not None
    batch_ms: dict[str, list[float]] = {"torch": [], "onnxruntime": []}
    for _ in range(3):
        started = time.perf_counter()
        onnx.embed(batch)
        batch_ms["torch"].append(1000 * (time.perf_counter() - started))
        started = time.perf_counter()
        encoder.encode({k: v.numpy() for k, v in model.tokenize(batch).items()})
        batch_ms["onnxruntime"].append(1000 * (time.perf_counter() - started))

    result = {
        "queries": len(texts) * ROUNDS,
        "torch_threads": int(settings.EMBEDDING_TORCH_THREADS),
        "onnx_threads": 1,
        "cpus": len(os.sched_getaffinity(0)),
        "load_average_after": os.getloadavg(),
        "python": platform.python_version(),
        "embed_one": {
            name: {"p50_ms": round(percentile(v, 50), 2), "p95_ms": round(percentile(v, 95), 2)}
            for name, v in times.items()
        },
        "max_abs_diff": diff,
        "batch": {"texts": len(batch), **{name: round(min(v), 1) for name, v in batch_ms.items()}},
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "embedding.json").write_text(json.dumps(result, indent=2) + "\n")
    e = result["embed_one"]
    (RESULTS / "embedding.md").write_text(
        f"""# Query embedding benchmark (`python bench/embedding.py`)

LocalEmbedder.embed_one on {result["queries"]} search-like queries per path, interleaved rounds,
{result["cpus"]} CPUs (shared machine; load average afterwards {", ".join(f"{x:.2f}" for x in result["load_average_after"])}).

| path | p50 ms | p95 ms |
|---|---|---|
| torch (sentence-transformers encode, {result["torch_threads"]} thread) | {e["torch"]["p50_ms"]} | {e["torch"]["p95_ms"]} |
| ONNX Runtime (1 thread) | {e["onnxruntime"]["p50_ms"]} | {e["onnxruntime"]["p95_ms"]} |

Largest difference between the two vectors of a query: {diff:.2e}.
One batch of {len(batch)} texts (best of 3): torch {result["batch"]["torch"]} ms, ONNX Runtime
{result["batch"]["onnxruntime"]} ms; batches (ingest) stay on torch.
"""
    )
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
