"""Where the 2Wiki batch ingest's CPU goes, step by step and thread by thread, whatever the machine's load.

Runs `bench/ingest.py --set 2wiki` (same passages, groups and embedding-alone measure; it writes its usual
results) with thin wrappers that add each step's thread CPU time (`time.thread_time`: only the calling thread's
own seconds, not time spent waiting for a core or the GIL) under the thread that ran it: the task's thread (the
stages, the group's extraction, SQL and graph writes) or the batch's embedder thread (chunk and entity-name
vectors). Steps nest (document_stage_index holds graph_document_write, which holds store_document_write ...),
so a line is that step in all, not beside the others. A wall-clock profile (py-spy, cProfile) on a shared
2-core machine mostly measures who waited for a core; these are what each step costs.

    .venv/bin/python bench/ingest_cpu.py [--passages N] [--cold-cache]
"""

from __future__ import annotations

import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import bench.ingest as bench_ingest  # noqa: E402

SECONDS: dict[tuple[str, str], float] = defaultdict(float)
CALLS: dict[tuple[str, str], int] = defaultdict(int)


def _thread() -> str:
    return "embedder" if threading.current_thread().name.startswith("embed") else "task"


def _timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.thread_time()
        try:
            return fn(*args, **kwargs)
        finally:
            SECONDS[(_thread(), name)] += time.thread_time() - start
            CALLS[(_thread(), name)] += 1

    return timed


def _timed_block(name: str, fn: Callable[..., AbstractContextManager[Any]]) -> Callable[..., Any]:
    """A context manager's entry and exit timed (not the block it holds)."""

    @contextmanager
    def timed(*args: Any, **kwargs: Any) -> Iterator[Any]:
        start = time.thread_time()
        manager = fn(*args, **kwargs)
        value = manager.__enter__()
        SECONDS[(_thread(), name)] += time.thread_time() - start
        CALLS[(_thread(), name)] += 1
        try:
            yield value
        except BaseException as exc:
            if not manager.__exit__(type(exc), exc, exc.__traceback__):
                raise
        else:
            start = time.thread_time()
            manager.__exit__(None, None, None)
            SECONDS[(_thread(), name)] += time.thread_time() - start

    return timed


def _patch(module: Any, names: list[str], *, block: bool = False) -> None:
    for name in names:
        setattr(module, name, (_timed_block if block else _timed)(name, getattr(module, name)))


def _install() -> None:
    import django

    django.setup()
    import exograph.documents.extraction as extraction
    from exograph.documents.services import batch, batch_embed, stages
    from exograph.graphs import services as graph_services
    from exograph.graphs import store
    from exograph.graphs.services import ingest as graph_ingest
    from exograph.graphs.store import core

    _patch(batch, ["document_upload_prepare", "document_create", "document_stage_parse", "document_stage_embed"])
    _patch(batch, ["document_stage_index", "_extractions", "document_extract", "chunk_vectors", "_chunks_write"])
    _patch(batch_embed, ["names_prepare"])
    _patch(extraction, ["ner_read_ahead"], block=True)
    _patch(stages, ["_running", "_unfinished_at", "_progress", "chunk_blocks"])
    _patch(stages, ["lease_hold"], block=True)
    _patch(graph_services, ["graph_document_write"])
    _patch(graph_ingest, ["types_resolve", "_prepare", "graph_counts_apply"])
    _patch(graph_ingest, ["_document_lock"], block=True)
    _patch(store, ["store_document_write"])
    _patch(core, ["_header", "_run"])


def main() -> None:
    run = bench_ingest.run

    def installed(**kwargs: Any) -> None:
        _install()
        run(**kwargs)

    bench_ingest.run = installed  # type: ignore[assignment]
    sys.argv = [sys.argv[0], "--set", "2wiki", *sys.argv[1:]]
    try:
        bench_ingest.main()
    finally:
        print("\nthread CPU s by step (steps nest: a line is that step in all)")
        print(f"{'thread':9} {'step':26} {'calls':>6} {'CPU s':>7}")
        for (thread, name), seconds in sorted(SECONDS.items(), key=lambda item: -item[1]):
            print(f"{thread:9} {name:26} {CALLS[(thread, name)]:6d} {seconds:7.2f}")


if __name__ == "__main__":
    main()
