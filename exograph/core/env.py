"""Typed environment helpers: the only way settings read the environment.

Every helper raises ``ImproperlyConfigured`` naming the variable on a bad value,
so a misconfigured deployment fails at boot instead of at the first request.
A secret ``NAME`` may also come from the file named by ``NAME_FILE``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_is_set(name: str) -> bool:
    return bool(os.environ.get(name)) or bool(os.environ.get(f"{name}_FILE"))


def env_bool(name: str, *, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be one of 1/0, true/false, yes/no, on/off; got {raw!r}.")


def env_int(name: str, *, default: int, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be an integer; got {raw!r}.") from exc
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}; got {value}.")
    return value


def env_float(name: str, *, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return float(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be a number; got {raw!r}.") from exc


def env_list(name: str, *, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_choice(name: str, *, choices: tuple[str, ...], default: str) -> str:
    value = os.environ.get(name, default).strip().lower()
    if value not in choices:
        raise ImproperlyConfigured(f"{name} must be one of {', '.join(choices)}; got {value!r}.")
    return value


def env_secret(name: str, *, required: bool = True, default: str = "") -> str:
    """Read a secret from NAME, or from the file named by NAME_FILE (Docker/K8s secrets)."""
    value = os.environ.get(name)
    file_name = os.environ.get(f"{name}_FILE")
    if value and file_name:
        raise ImproperlyConfigured(f"Set either {name} or {name}_FILE, not both.")
    if file_name:
        try:
            value = Path(file_name).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ImproperlyConfigured(f"{name}_FILE={file_name!r} cannot be read: {exc}.") from exc
    if not value:
        if required:
            raise ImproperlyConfigured(f"{name} (or {name}_FILE) must be set.")
        return default
    return value


def env_db(name: str, *, default: str) -> dict[str, Any]:
    raw = os.environ.get(name) or default
    try:
        config: dict[str, Any] = dict(dj_database_url.parse(raw, conn_max_age=60, conn_health_checks=True))
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} is not a valid database URL: {exc}.") from exc
    return config


def redis_url_db(url: str) -> int:
    """The logical database ``url`` names (``redis://h:6379/5``, ``unix:///r.sock?db=5``); 0 when it names none.

    The settings count their databases from it (cache, limits, broker, channels: that number + 2, 3, 1, 4), so two
    deployments, or two test processes, can share one Redis server without sharing keys.
    """
    from urllib.parse import parse_qs, urlsplit

    parts = urlsplit(url)
    raw = parts.path.strip("/") if parts.scheme != "unix" else (parse_qs(parts.query).get("db") or [""])[0]
    if not raw:
        return 0
    if not raw.isdigit():
        raise ImproperlyConfigured(f"Redis URL names database {raw!r}; a database is a number (redis://host:6379/0).")
    return int(raw)


def redis_db_url(url: str, db: int, *, for_kombu: bool = False) -> str:
    """The same Redis server as ``url`` with logical database ``db``.

    Accepts ``redis://``, ``rediss://`` and ``unix://`` URLs; kombu spells unix
    sockets ``redis+socket://`` with ``virtual_host`` for the database.
    """
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.scheme == "unix":
        if for_kombu:
            return f"redis+socket://{parts.path}?virtual_host={db}"
        return f"unix://{parts.path}?db={db}"
    if parts.scheme not in {"redis", "rediss"}:
        raise ImproperlyConfigured(f"Redis URL must start with redis://, rediss:// or unix://; got {url!r}.")
    return urlunsplit((parts.scheme, parts.netloc, f"/{db}", parts.query, ""))


def email_url_settings(name: str, url: str) -> dict[str, Any]:
    """Django EMAIL_* settings from an email URL in variable ``name``.

    ``smtp://user:password@host:587`` (STARTTLS), ``smtps://…:465`` (implicit TLS),
    ``smtp+plain://host:25`` (no TLS, a local relay only) or ``console://`` (print to stdout).
    User and password are percent-decoded.
    """
    from urllib.parse import unquote, urlsplit

    parts = urlsplit(url)
    if parts.scheme == "console":
        return {"EMAIL_BACKEND": "django.core.mail.backends.console.EmailBackend"}
    tls = {"smtp": (True, False), "smtps": (False, True), "smtp+plain": (False, False)}.get(parts.scheme)
    if tls is None or not parts.hostname:
        raise ImproperlyConfigured(
            f"{name} must look like smtp://user:password@host:587, smtps://…:465, smtp+plain://host:25 or console://."
        )
    try:
        port = parts.port
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} has an invalid port.") from exc
    return {
        "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "EMAIL_HOST": parts.hostname,
        "EMAIL_PORT": port or (465 if tls[1] else 587 if tls[0] else 25),
        "EMAIL_HOST_USER": unquote(parts.username or ""),
        "EMAIL_HOST_PASSWORD": unquote(parts.password or ""),
        "EMAIL_USE_TLS": tls[0],
        "EMAIL_USE_SSL": tls[1],
    }
