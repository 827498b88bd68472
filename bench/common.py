"""What every benchmark does first: throwaway backing services and bench-only settings, and percentiles."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from exograph.core.embedded import EmbeddedFalkorDB


def start_services(
    prefix: str,
    *,
    keep_database_url: bool = False,
    keep_redis_url: bool = False,
    eager_tasks: bool = False,
    directory: Path | None = None,
) -> tuple[EmbeddedFalkorDB | None, Path]:
    """Start a throwaway FalkorDB (also the Redis) in a temp dir and set the environment before Django loads.

    keep_database_url / keep_redis_url: use the DATABASE_URL / REDIS_URL already set (no embedded
    Redis is started when REDIS_URL is kept and set). directory: keep everything (FalkorDB persisted, the
    SQLite database) there instead, so a later run can reuse it. Returns the server (None if none) and the dir.
    """
    tmp = directory or Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    tmp.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "exograph.settings")
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-secret-key-" + "x" * 40)
    os.environ.setdefault("DJANGO_SECURE_SSL_REDIRECT", "0")
    os.environ.setdefault("DJANGO_STATIC_MANIFEST", "0")
    os.environ["EXOGRAPH_VAR_DIR"] = str(tmp / "var")
    os.environ["EXOGRAPH_LOG_LEVEL"] = "warning"
    # FalkorDB (GraphBLAS) and torch both use OpenMP; spinning idle threads on 2 shared cores made every
    # embedding after a graph query 20-50x slower. The embedded server inherits this environment.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    if eager_tasks:
        os.environ["CELERY_TASK_ALWAYS_EAGER"] = "1"
    if not keep_database_url:
        os.environ.pop("DATABASE_URL", None)
    if keep_redis_url and os.environ.get("REDIS_URL"):
        return None, tmp
    server = EmbeddedFalkorDB.in_directory(tmp)
    if directory is not None:
        server.persist = True
    # A kept directory replays its append-only file first, which takes a while for a large corpus.
    server.start(wait_seconds=600.0 if directory is not None else 15.0)
    os.environ["FALKORDB_URL"] = server.url
    os.environ["REDIS_URL"] = server.url
    return server, tmp


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


class DatabaseUnavailable(SystemExit):
    """The benchmark's PostgreSQL cannot be reached or its database created: exits with a message naming the fix."""


def postgres_database_ensure(url: str) -> None:
    """Create the PostgreSQL database `url` names if it is missing (connecting to the server's `postgres` database).
    Raises DatabaseUnavailable (exit status 2, the message on stderr) naming the fix when it cannot."""
    import psycopg
    from psycopg import sql

    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    admin = urlunsplit(("postgresql", parts.netloc, "/postgres", "", ""))
    try:
        with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
            if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None:
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    except psycopg.Error as exc:
        host = parts.hostname or "localhost"
        raise DatabaseUnavailable(
            f"bench: PostgreSQL at {host}:{parts.port or 5432} is not usable for database {name!r} "
            f"({type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else 'no detail'}).\n"
            "Fix: start PostgreSQL there (e.g. `pg_ctlcluster 15 main start`), or point DATABASE_URL at a "
            "reachable PostgreSQL database, e.g. DATABASE_URL=postgres://user:password@host:5432/exograph_bench. "
            "(DATABASE_URL=sqlite:///path measures SQLite instead, which is not the production backend.)"
        ) from exc
