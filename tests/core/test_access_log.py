"""Access log and log output: method, path, status, duration and ids; never a key, a query string or a secret."""

from __future__ import annotations

import asyncio
import io
import logging
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from exograph.accounts.models import ApiKey
from exograph.accounts.services import api_key_create
from exograph.asgi import application
from exograph.core.logging import RedactSecretsFilter
from tests.factories import UserFactory

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def log_output() -> Iterator[io.StringIO]:
    """What the configured console handler (the one production writes) prints during the test."""
    handlers = [
        h
        for h in logging.getLogger().handlers
        if isinstance(h, logging.StreamHandler) and any(isinstance(f, RedactSecretsFilter) for f in h.filters)
    ]
    assert handlers, "the console handler with the redaction filter is not configured"
    buffer = io.StringIO()
    previous = [h.setStream(buffer) for h in handlers]
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.DEBUG)
    try:
        yield buffer
    finally:
        root.setLevel(level)
        for handler, stream in zip(handlers, previous, strict=True):
            handler.setStream(stream)  # type: ignore[arg-type]


def _secret_part(key: str) -> str:
    """What follows 'exo_<prefix>_': split on the first two underscores only, because the urlsafe secret may hold
    '_' itself (splitting on the last one gave a one-letter fragment that any log line could contain by chance)."""
    return key.split("_", 2)[2]


async def _requests(calls: list[tuple[str, str, dict[str, str]]]) -> list[httpx.Response]:
    transport = httpx.ASGITransport(app=application)
    async with httpx.AsyncClient(transport=transport, base_url="https://127.0.0.1") as client:
        return [await client.request(method, url, headers=headers) for method, url, headers in calls]


@pytest.mark.django_db(transaction=True)
def test_no_key_reaches_any_log_line(log_output):
    alice = UserFactory(email="alice@example.com")
    secret = api_key_create(actor=alice, name="logs").secret
    key = ApiKey.objects.get(user=alice, name="logs")
    secret_part = _secret_part(secret)
    forged = secret[:-4] + "zzzz"
    responses = asyncio.run(
        _requests(
            [
                ("GET", f"/api/v1/me/?api_key={secret}&q=private+question", {"Authorization": f"Bearer {secret}"}),
                ("GET", f"/api/v1/graphs/?key={secret}", {"X-API-Key": forged}),
                ("GET", f"/api/v1/{secret}/", {}),
                ("GET", "/api/v1/me/", {"Authorization": f"Bearer {forged}"}),
            ]
        )
    )
    assert [r.status_code for r in responses] == [200, 401, 404, 401]
    logging.getLogger("exograph.tests").warning("a careless line with %s and %s", secret, forged)
    logging.getLogger("uvicorn.error").error("Exception in ASGI application for %s", f"/x?api_key={secret}")

    output = log_output.getvalue()
    for leaked in (secret, secret_part, forged, _secret_part(forged), "private+question", "private question"):
        assert leaked not in output
    access = [line for line in output.splitlines() if "exograph.access" in line]
    assert len(access) == 4
    assert "GET /api/v1/me/ 200" in access[0]
    assert f"user_id={alice.id} api_key_id={key.id}" in access[0]
    assert "?" not in "".join(access)
    assert "GET /api/v1/graphs/ 401" in access[1] and "user_id=- api_key_id=-" in access[1]
    assert "a careless line with exo_[redacted]" in output
    assert "Exception in ASGI application for /x?api_key=[redacted]" in output


@pytest.mark.django_db(transaction=True)
def test_access_log_carries_the_request_id_and_echoes_it(log_output):
    responses = asyncio.run(
        _requests([("GET", "/healthz", {"X-Request-ID": "req-123"}), ("GET", "/healthz", {"X-Request-ID": "bad id\n"})])
    )
    assert responses[0].headers["X-Request-ID"] == "req-123"
    generated = responses[1].headers["X-Request-ID"]
    assert generated != "bad id\n" and len(generated) == 32
    output = log_output.getvalue()
    assert "GET /healthz 200" in output and "request_id=req-123" in output and f"request_id={generated}" in output


def test_shipped_server_commands_turn_uvicorns_access_log_off():
    for name in ("docker/compose.yml", "docker/Dockerfile", "scripts/run.py"):
        assert "--no-access-log" in (ROOT / name).read_text(encoding="utf-8"), name


@pytest.mark.django_db(transaction=True)
def test_no_key_reaches_json_log_lines(log_output, settings):
    from exograph.core.logging import JsonFormatter

    handler = next(
        h for h in logging.getLogger().handlers if any(isinstance(f, RedactSecretsFilter) for f in h.filters)
    )
    previous = handler.formatter
    handler.setFormatter(JsonFormatter())
    try:
        secret = api_key_create(actor=UserFactory(email="alice@example.com"), name="logs").secret
        statuses = [r.status_code for r in asyncio.run(_requests([("GET", f"/api/v1/{secret}/?key={secret}", {})]))]
    finally:
        handler.setFormatter(previous)
    assert statuses == [404]
    output = log_output.getvalue()
    assert '"path": "/api/v1/exo_[redacted]/"' in output
    assert secret not in output and _secret_part(secret) not in output


def test_json_log_lines_carry_the_access_fields():
    from exograph.core.logging import JsonFormatter

    record = logging.LogRecord("exograph.access", logging.INFO, __file__, 1, "GET / 200", None, None)
    record.access = {"method": "GET", "path": "/", "status": 200, "duration_ms": 1.0, "request_id": "r"}
    line = JsonFormatter().format(record)
    assert '"status": 200' in line and '"path": "/"' in line and '"request_id": "r"' in line
