from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from exograph.core.env import email_url_settings, env_bool, env_int, env_secret, redis_db_url, redis_url_db


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


def test_redis_url_names_the_first_database_the_settings_count_from():
    assert [
        redis_url_db(u) for u in ("redis://h:6379", "redis://h:6379/0", "rediss://h/5", "unix:///r.sock?db=10")
    ] == [
        0,
        0,
        5,
        10,
    ]
    assert redis_url_db("unix:///r.sock") == 0
    with pytest.raises(ImproperlyConfigured, match="a database is a number"):
        redis_url_db("redis://h:6379/cache")


def test_email_url_configures_smtp_with_starttls_and_decoded_credentials():
    config = email_url_settings("EMAIL_URL", "smtp://mailer%40example.com:p%40ss@smtp.example.com:2525")
    assert config == {
        "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "EMAIL_HOST": "smtp.example.com",
        "EMAIL_PORT": 2525,
        "EMAIL_HOST_USER": "mailer@example.com",
        "EMAIL_HOST_PASSWORD": "p@ss",
        "EMAIL_USE_TLS": True,
        "EMAIL_USE_SSL": False,
    }
    assert email_url_settings("EMAIL_URL", "smtps://smtp.example.com")["EMAIL_PORT"] == 465
    assert email_url_settings("EMAIL_URL", "console://")["EMAIL_BACKEND"].endswith("console.EmailBackend")
    with pytest.raises(ImproperlyConfigured, match="EMAIL_URL must look like"):
        email_url_settings("EMAIL_URL", "http://smtp.example.com")
