"""/readyz: every check at once, each bounded (a hung one is `timeout`, named), and `warming` until this process
has loaded its embedding model (issue 23 §5 and §6). The frozen embedded store: tests/faults/test_store_frozen.py."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from exograph.core import views as health
from exograph.graphs import embeddings

pytestmark = pytest.mark.django_db


@pytest.fixture
def cold_embedder(monkeypatch, settings) -> Iterator[list[str]]:
    """This process's local embedder as a fresh process has it: not loaded, nothing warming it yet. Yields the
    list of warm-up starts readyz asked for (recorded, not run: the test loads the model itself)."""
    settings.EMBEDDING_WARM_START = True  # the suite turns it off (tests/services_plugin.py)
    monkeypatch.setattr(embeddings, "_local", embeddings.LocalEmbedder())
    monkeypatch.setattr(embeddings, "_warm_failed", None)
    started: list[str] = []
    monkeypatch.setattr(embeddings, "embedder_warm_in_background", lambda: started.append("warm"))
    yield started


def test_readyz_is_warming_until_the_embedding_model_is_loaded_then_ok(client, settings, cold_embedder):
    settings.EMBEDDING_PROVIDER = "local"
    cold = client.get("/readyz")
    assert cold.status_code == 503
    body = cold.json()
    assert body["status"] == "warming" and body["checks"]["embeddings"] == "warming"
    assert body["error"]["code"] == "warming" and "embedding model" in body["error"]["message"]
    assert cold_embedder == ["warm"]  # a process nobody warmed starts warming at its first readyz

    embeddings.embedder_warm()  # what asgi.py starts in the background, and a worker runs at process init
    assert embeddings.embedder_is_warm()
    warm = client.get("/readyz")
    assert warm.status_code == 200 and warm.json()["checks"]["embeddings"] == "ok"


def test_a_model_that_failed_to_load_is_unavailable_not_warming_forever(client, monkeypatch, cold_embedder):
    monkeypatch.setattr(embeddings, "_warm_failed", "PermanentError")
    body = client.get("/readyz").json()
    assert body["status"] == "unavailable" and body["checks"]["embeddings"] == "unavailable: RuntimeError"


def test_a_hung_check_is_reported_as_timeout_by_name_while_the_others_answer(client, settings, monkeypatch):
    settings.READYZ_CHECK_TIMEOUT = 0.3
    release = threading.Event()
    monkeypatch.setitem(health.CHECKS, "stuck", lambda timeout: release.wait(30))
    monkeypatch.setitem(health.NAMES, "stuck", "the stuck dependency")
    monkeypatch.setitem(health.CHECKS, "embeddings", lambda: None)
    try:
        response = client.get("/readyz")
    finally:
        release.set()
    assert response.status_code == 503
    body = response.json()
    assert body["checks"]["stuck"] == "timeout"
    assert all(status == "ok" for name, status in body["checks"].items() if name != "stuck"), body["checks"]
    assert body["error"]["message"] == "Not ready: the stuck dependency did not answer within 0.3 s."


def test_components_sharing_a_server_that_is_down_are_one_cause(client, settings, tmp_path, monkeypatch):
    """Redis and the graph store on one (absent) server: one sentence naming it, both `unavailable`."""
    down = f"unix://{tmp_path}/nothing-here.sock"
    settings.REDIS_URL = settings.FALKORDB_URL = down
    monkeypatch.setitem(health.CHECKS, "embeddings", lambda: None)
    body = client.get("/readyz").json()
    assert body["checks"]["redis"] == body["checks"]["falkordb"] == "unavailable: ConnectionError"
    message = body["error"]["message"]
    assert message.count(f"the server at {tmp_path}/nothing-here.sock") == 1
    assert "(serving Redis, FalkorDB graph store) is unreachable" in message


def test_every_configured_falkordb_primary_is_checked_not_only_the_default(client, settings, tmp_path, monkeypatch):
    """A second primary (FALKORDB_PRIMARIES) holds graphs placed on it: when it is down the process is not ready
    (before, /readyz pinged FALKORDB_URL alone and answered 200); when it answers, it is `ok` by name."""
    monkeypatch.setitem(health.CHECKS, "embeddings", lambda: None)
    settings.FALKORDB_PRIMARIES = f"second=unix://{tmp_path}/second-down.sock"
    down = client.get("/readyz")
    assert down.status_code == 503
    body = down.json()
    assert body["checks"]["falkordb"] == "ok"
    assert body["checks"]["falkordb_second"] == "unavailable: ConnectionError"
    assert body["error"]["message"] == "Not ready: FalkorDB graph store primary 'second' unreachable."

    settings.FALKORDB_PRIMARIES = f"second={settings.FALKORDB_URL}"
    up = client.get("/readyz")
    assert up.status_code == 200
    assert up.json()["checks"]["falkordb_second"] == "ok"
