from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from exograph.core.env import env_bool, env_int, env_secret, redis_db_url


def test_env_bool_rejects_garbage(monkeypatch):
    monkeypatch.setenv("X_FLAG", "maybe")
    with pytest.raises(ImproperlyConfigured, match="X_FLAG"):
        env_bool("X_FLAG", default=False)
    monkeypatch.setenv("X_FLAG", "Yes")
    assert env_bool("X_FLAG", default=False) is True


def test_env_int_names_the_variable(monkeypatch):
    monkeypatch.setenv("X_NUM", "ten")
    with pytest.raises(ImproperlyConfigured, match="X_NUM must be an integer"):
        env_int("X_NUM", default=1)


def test_secret_from_file(monkeypatch, tmp_path):
    path = tmp_path / "secret"
    path.write_text("s3cret\n")
    monkeypatch.delenv("X_SECRET", raising=False)
    monkeypatch.setenv("X_SECRET_FILE", str(path))
    assert env_secret("X_SECRET") == "s3cret"
    monkeypatch.setenv("X_SECRET", "both")
    with pytest.raises(ImproperlyConfigured, match="not both"):
        env_secret("X_SECRET")


def test_missing_required_secret(monkeypatch):
    monkeypatch.delenv("X_SECRET", raising=False)
    monkeypatch.delenv("X_SECRET_FILE", raising=False)
    with pytest.raises(ImproperlyConfigured, match="X_SECRET"):
        env_secret("X_SECRET")
    assert env_secret("X_SECRET", required=False, default="d") == "d"


def test_redis_db_url_forms():
    assert redis_db_url("redis://h:6379/0", 3) == "redis://h:6379/3"
    assert redis_db_url("unix:///tmp/r.sock", 2) == "unix:///tmp/r.sock?db=2"
    assert redis_db_url("unix:///tmp/r.sock", 1, for_kombu=True) == "redis+socket:///tmp/r.sock?virtual_host=1"
    with pytest.raises(ImproperlyConfigured):
        redis_db_url("http://h", 1)
