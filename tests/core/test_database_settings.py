"""Database settings per engine: PostgreSQL uses psycopg's pool and no persistent connections (ASGI)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, django
django.setup()
from django.conf import settings
from django.db import connection
db = settings.DATABASES["default"]
pool = getattr(connection, "pool", None)
print(json.dumps({
    "engine": db["ENGINE"], "conn_max_age": db["CONN_MAX_AGE"], "pool": db.get("OPTIONS", {}).get("pool"),
    "pool_class": type(pool).__module__ + "." + type(pool).__name__ if pool is not None else None,
    "pool_max": getattr(pool, "max_size", None),
    "request_concurrency": settings.REQUEST_CONCURRENCY,
}))
"""


def _settings_for(database_url: str, tmp_path: Path, **extra: str) -> dict:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "exograph.settings",
        "DATABASE_URL": database_url,
        "DJANGO_SECRET_KEY": "test-only-secret-key-0123456789-0123456789",
        "EXOGRAPH_VAR_DIR": str(tmp_path),
        **extra,
    }
    out = subprocess.run(  # noqa: S603
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, check=True, capture_output=True, text=True, timeout=120
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_postgresql_uses_the_psycopg_pool_without_persistent_connections(tmp_path):
    # Building the pool opens nothing (Django creates it closed), so no server is needed here.
    probe = _settings_for("postgres://exo@127.0.0.1:5432/exo", tmp_path, EXOGRAPH_DB_POOL_MAX_SIZE="7")
    assert probe["conn_max_age"] == 0
    assert probe["pool"]["max_size"] == 7
    assert probe["pool_class"] == "psycopg_pool.pool.ConnectionPool"
    assert probe["pool_max"] == 7
    assert probe["request_concurrency"] == 6  # the request gate: the pool less a margin (a fifth, at least 1)


def test_the_request_gate_is_sized_from_the_pool_unless_set(tmp_path):
    url = "postgres://exo@127.0.0.1:5432/exo"
    assert _settings_for(url, tmp_path)["request_concurrency"] == 24  # pool of 30
    assert _settings_for(url, tmp_path, EXOGRAPH_DB_POOL_MAX_SIZE="2")["request_concurrency"] == 1
    assert _settings_for(url, tmp_path, EXOGRAPH_REQUEST_CONCURRENCY="40")["request_concurrency"] == 40


def test_sqlite_keeps_no_pool_and_no_persistent_connections(tmp_path):
    probe = _settings_for(f"sqlite:///{tmp_path / 'x.sqlite3'}", tmp_path)
    assert probe["conn_max_age"] == 0
    assert probe["pool"] is None and probe["pool_class"] is None
    assert probe["request_concurrency"] == 0  # no pool to protect: no gate
