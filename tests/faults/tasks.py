"""A probe task for the fault tests: sleeps in small steps, then records its own completion once.

Imported only by the fault tests' worker (`celery worker --include tests.faults.tasks`), never by the service.
"""

from __future__ import annotations

import time
from pathlib import Path

from celery import shared_task


@shared_task(name="tests.faults.probe", acks_late=True)
def probe_task(*, marker_dir: str, run_seconds: float) -> None:
    """Append a 'started' line, work for run_seconds, then append a 'done' line (files in marker_dir)."""
    directory = Path(marker_dir)
    with (directory / "started").open("a") as started:
        started.write("started\n")
    deadline = time.monotonic() + run_seconds
    while time.monotonic() < deadline:
        time.sleep(0.1)
    with (directory / "done").open("a") as done:
        done.write("done\n")


@shared_task(name="tests.faults.embedder_state", acks_late=True)
def embedder_state_task(*, marker_dir: str) -> None:
    """Write whether this worker process had its embedding model loaded when the task started (warm start)."""
    from exograph.graphs.embeddings import embedder_is_warm

    (Path(marker_dir) / "embedder").write_text("loaded" if embedder_is_warm() else "cold")


@shared_task(bind=True, name="tests.faults.retry_probe", acks_late=True)
def retry_probe_task(self, *, marker_dir: str, countdown: float) -> None:  # type: ignore[no-untyped-def]
    """Append a 'run' line; the first run asks to run again in countdown seconds (a Celery retry, as research's
    run task does on a transient failure), the second appends a 'done' line."""
    directory = Path(marker_dir)
    with (directory / "runs").open("a") as runs:
        runs.write(f"run {self.request.retries}\n")
    if not self.request.retries:
        raise self.retry(countdown=countdown, max_retries=1)
    with (directory / "done").open("a") as done:
        done.write("done\n")
