"""`make bench-billing` measures PostgreSQL by default, never a silent SQLite file (issue 24)."""

from __future__ import annotations

import os

import pytest

from bench import billing
from bench.common import DatabaseUnavailable, postgres_database_ensure


def test_without_database_url_the_bench_uses_postgresql_and_ensures_its_database(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    ensured: list[str] = []
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.setattr(billing, "postgres_database_ensure", ensured.append)
    assert billing.database_url() == "postgres://postgres@127.0.0.1:5432/exograph_bench"
    assert ensured == ["postgres://postgres@127.0.0.1:5432/exograph_bench"]
    assert os.environ["DATABASE_URL"] == "postgres://postgres@127.0.0.1:5432/exograph_bench"


def test_a_set_database_url_is_kept_and_sqlite_only_on_purpose(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    ensured: list[str] = []
    monkeypatch.setattr(billing, "postgres_database_ensure", ensured.append)
    monkeypatch.setenv("DATABASE_URL", "sqlite:////tmp/bench-on-purpose.sqlite3")
    assert billing.database_url() == "sqlite:////tmp/bench-on-purpose.sqlite3" and ensured == []


def test_an_unreachable_postgresql_is_a_clear_error_naming_the_fix() -> None:
    with pytest.raises(DatabaseUnavailable) as raised:
        postgres_database_ensure("postgres://postgres@127.0.0.1:1/exograph_bench")
    message = str(raised.value)
    assert "127.0.0.1:1" in message and "exograph_bench" in message
    assert "Fix:" in message and "DATABASE_URL=" in message
