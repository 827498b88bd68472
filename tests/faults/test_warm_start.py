"""Warm start (issue 23 §6): a fresh web process and fresh worker processes load the embedding model before they
report ready, so the first request after a restart does not wait for it. The suite turns warm start off for
itself (tests/services_plugin.py); these processes run with the default, on."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from celery import Celery

from exograph.core.embedded import EmbeddedFalkorDB
from tests.faults.conftest import broker_urls, database_url, wait_until

pytestmark = [pytest.mark.faults, pytest.mark.django_db(transaction=True)]

WARM = {"EXOGRAPH_EMBEDDING_WARM_START": "1"}


def test_a_fresh_web_process_is_ready_only_once_its_embedding_model_is_loaded(
    throwaway_store: EmbeddedFalkorDB, start_web
):
    redis_url, broker_url = broker_urls(throwaway_store, tcp=False)
    env = {"DATABASE_URL": database_url(), "REDIS_URL": redis_url, "FALKORDB_URL": redis_url, **WARM}
    env["CELERY_BROKER_URL"] = broker_url
    web = start_web(env)
    answers: list[dict[str, object]] = []

    def ready() -> bool:
        response = httpx.get(f"{web.base}/readyz", timeout=10)
        answers.append(response.json())
        return response.status_code == 200

    wait_until(ready, timeout=240, what="/readyz 200 (model loaded)", interval=0.2)
    assert answers[-1]["checks"]["embeddings"] == "ok"  # type: ignore[index]
    # Every earlier answer was `warming` (or ok): never ready with the model still loading.
    assert all(a["status"] == "warming" and a["checks"]["embeddings"] == "warming" for a in answers[:-1]), answers  # type: ignore[index]
    assert "embedding model loaded" in web.log()


def test_fresh_worker_processes_load_the_model_before_their_first_task(
    throwaway_store: EmbeddedFalkorDB, start_worker, short_tmp: Path
):
    redis_url, broker_url = broker_urls(throwaway_store, tcp=False)
    start_worker(redis_url=redis_url, broker_url=broker_url, extra_env={"DATABASE_URL": database_url(), **WARM})
    sender = Celery("fault-sender", broker=broker_url, set_as_current=False)
    try:
        sender.send_task("tests.faults.embedder_state", kwargs={"marker_dir": str(short_tmp)}, queue="default")
    finally:
        sender.close()
    marker = short_tmp / "embedder"
    wait_until(marker.exists, timeout=240, what="the task ran")
    assert marker.read_text() == "loaded"
