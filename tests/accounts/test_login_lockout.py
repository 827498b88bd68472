"""Login lockout (django-axes): per account across addresses, per address, and forwarded headers only from proxies."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import httpx
import pytest
from django.conf import settings
from django.test import Client
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from exograph.asgi import application
from tests.factories import UserFactory

PASSWORD = "correct-horse-battery-staple"
ROOT = Path(__file__).resolve().parents[2]


async def _login_attempts(peer: str, attempts: list[tuple[str, str, str]]) -> list[int]:
    """POST /login/ through uvicorn's proxy-header handling, as the server is configured; one status per attempt.

    Each attempt is (email, password, X-Forwarded-For); peer is the address the TCP connection comes from.
    """
    app = ProxyHeadersMiddleware(application, trusted_hosts=",".join(settings.FORWARDED_ALLOW_IPS))
    transport = httpx.ASGITransport(app=app, client=(peer, 40000))
    statuses: list[int] = []
    # https, as in production (secure cookies; CSRF then checks the Referer).
    base = "https://127.0.0.1"
    async with httpx.AsyncClient(transport=transport, base_url=base, headers={"Referer": f"{base}/login/"}) as client:
        page = await client.get("/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
        assert token is not None
        for email, password, forwarded in attempts:
            response = await client.post(
                "/login/",
                data={"username": email, "password": password, "csrfmiddlewaretoken": token.group(1)},
                headers={"X-Forwarded-For": forwarded} if forwarded else {},
            )
            statuses.append(response.status_code)
    return statuses


@pytest.mark.django_db(transaction=True)
def test_spoofed_forwarded_for_from_an_untrusted_peer_gives_no_more_guesses():
    alice = UserFactory(email="alice@example.com")
    limit = settings.AXES_FAILURE_LIMIT
    spoofed = [(alice.email, f"wrong-{i}", f"198.51.100.{i}") for i in range(20)]
    statuses = asyncio.run(_login_attempts("203.0.113.7", [*spoofed, (alice.email, PASSWORD, "198.51.100.99")]))
    # Only `limit` guesses are judged (the last of them answers the lockout); the rest, and the right password, are 429.
    assert statuses[: limit - 1] == [200] * (limit - 1)
    assert statuses[limit - 1 :] == [429] * (len(statuses) - limit + 1)


@pytest.mark.django_db(transaction=True)
def test_addresses_a_client_prepends_through_a_trusted_proxy_give_no_more_guesses(settings):
    settings.FORWARDED_ALLOW_IPS = ["127.0.0.1"]  # a proxy on loopback is configured
    alice = UserFactory(email="alice@example.com")
    bob = UserFactory(email="bob@example.com")
    limit = settings.AXES_FAILURE_LIMIT
    # The proxy (127.0.0.1) appends the real client; what the client sent comes before it.
    spoofed = [(f"user{i}@example.com", "wrong", f"10.0.0.{i}, 198.51.100.20") for i in range(20)]
    statuses = asyncio.run(_login_attempts("127.0.0.1", [*spoofed, (alice.email, PASSWORD, "198.51.100.20")]))
    assert statuses.count(200) == limit - 1
    assert statuses[-1] == 429
    # Another client behind the same proxy is not locked out by 198.51.100.20's guesses.
    assert asyncio.run(_login_attempts("127.0.0.1", [(bob.email, PASSWORD, "198.51.100.21")])) == [302]


@pytest.mark.django_db(transaction=True)
def test_account_is_locked_out_across_addresses(settings):
    settings.FORWARDED_ALLOW_IPS = ["127.0.0.1"]  # a proxy on loopback is configured
    alice = UserFactory(email="alice@example.com")
    bob = UserFactory(email="bob@example.com")
    limit = settings.AXES_FAILURE_LIMIT
    # Genuine, different client addresses behind the trusted proxy: each guesses alice's password once.
    guesses = [(alice.email, f"wrong-{i}", f"192.0.2.{i}") for i in range(limit)]
    statuses = asyncio.run(_login_attempts("127.0.0.1", guesses))
    assert statuses == [200] * (limit - 1) + [429]
    later = asyncio.run(_login_attempts("127.0.0.1", [(alice.email, PASSWORD, "192.0.2.200")]))
    assert later == [429]
    # The lockout is the account's, not everyone's.
    assert asyncio.run(_login_attempts("127.0.0.1", [(bob.email, PASSWORD, "192.0.2.201")])) == [302]


@pytest.mark.django_db
def test_address_is_locked_out_across_accounts(alice, settings):
    settings.AXES_FAILURE_LIMIT = 3
    client = Client(REMOTE_ADDR="203.0.113.50")
    for i in range(3):
        client.post("/login/", {"username": f"someone{i}@example.com", "password": "wrong"})
    assert client.post("/login/", {"username": alice.email, "password": PASSWORD}).status_code == 429
    assert (
        Client(REMOTE_ADDR="203.0.113.51").post("/login/", {"username": alice.email, "password": PASSWORD}).status_code
        == 302
    )


@pytest.mark.django_db
def test_changing_the_case_of_the_email_gives_no_more_guesses(alice, settings):
    settings.AXES_FAILURE_LIMIT = 3
    for i, email in enumerate(["ALICE@example.com", "Alice@Example.com", "alice@EXAMPLE.COM"]):
        Client(REMOTE_ADDR=f"203.0.113.{60 + i}").post("/login/", {"username": email, "password": "wrong"})
    locked = Client(REMOTE_ADDR="203.0.113.70").post("/login/", {"username": alice.email, "password": PASSWORD})
    assert locked.status_code == 429


@pytest.mark.django_db
def test_lockout_page_says_when_to_retry(alice, settings):
    settings.AXES_FAILURE_LIMIT = 3
    client = Client(REMOTE_ADDR="203.0.113.80")
    for _ in range(2):
        assert client.post("/login/", {"username": alice.email, "password": "wrong"}).status_code == 200
    blocked = client.post("/login/", {"username": alice.email, "password": "wrong"})
    assert blocked.status_code == 429
    assert blocked.headers["Retry-After"] == "900"
    assert b"Too many failed login attempts" in blocked.content
    assert b"Try again in 15 minutes" in blocked.content
    assert b"<form" in blocked.content  # the login page itself, not a bare text


@pytest.mark.django_db
def test_lockout_answers_json_to_json_clients(alice, settings):
    settings.AXES_FAILURE_LIMIT = 2
    client = Client(REMOTE_ADDR="203.0.113.90", HTTP_ACCEPT="application/json")
    client.post("/login/", {"username": alice.email, "password": "wrong"})
    blocked = client.post("/login/", {"username": alice.email, "password": "wrong"})
    assert blocked.status_code == 429
    error = blocked.json()["error"]
    assert error["code"] == "login_locked_out"
    assert error["retry_after"] == 900 and "Try again in 15 minutes" in error["message"]
    assert blocked.headers["Retry-After"] == "900"


@pytest.mark.django_db
def test_successful_login_resets_the_count(alice, settings):
    settings.AXES_FAILURE_LIMIT = 3
    client = Client(REMOTE_ADDR="203.0.113.100")
    for _ in range(2):
        client.post("/login/", {"username": alice.email, "password": "wrong"})
    assert client.post("/login/", {"username": alice.email, "password": PASSWORD}).status_code == 302
    client.post("/logout/")
    for _ in range(2):
        assert client.post("/login/", {"username": alice.email, "password": "wrong"}).status_code == 200


def test_shipped_server_commands_never_trust_forwarded_headers_from_anyone():
    for name in ("docker/compose.yml", "docker/Dockerfile", "scripts/run.py"):
        text = (ROOT / name).read_text(encoding="utf-8")
        assert "forwarded-allow-ips '*'" not in text and '"--forwarded-allow-ips", "*"' not in text, name
    assert "*" not in settings.FORWARDED_ALLOW_IPS


def test_forwarded_allow_ips_star_is_refused(settings):
    from django.core.exceptions import ImproperlyConfigured

    from exograph.core.proxies import client_ip

    settings.FORWARDED_ALLOW_IPS = ["*"]
    with pytest.raises(ImproperlyConfigured, match="never '\\*'"):
        client_ip(_request("127.0.0.1"))


def _request(remote: str):  # type: ignore[no-untyped-def]
    from django.test import RequestFactory

    return RequestFactory().get("/", REMOTE_ADDR=remote)
