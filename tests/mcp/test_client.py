"""ExoGraphClient on its own: in-process over the ASGI app, REST errors as typed exceptions, keys masked."""

from __future__ import annotations

import anyio
import pytest

from mcp_bridge.client import ExoGraphAPIError, ExoGraphClient

pytestmark = pytest.mark.django_db(transaction=True)


def _client(key: str, scope: str | None = None) -> ExoGraphClient:
    from exograph.asgi import django_asgi_app

    return ExoGraphClient.in_process(asgi_app=django_asgi_app, api_key=key, scope=scope, host="127.0.0.1")


def test_client_calls_the_rest_api_in_process_with_the_default_scope(alice_key):
    async def run() -> tuple[dict[str, object], dict[str, object]]:
        async with _client(alice_key, scope="world") as exo:
            me = await exo.get("/api/v1/me/")
            graphs = await exo.graphs()
        return me, graphs

    me, graphs = anyio.run(run)
    assert me["email"] == "alice@example.com" and me["graph_scope"] == "world"
    assert graphs["count"] == len(graphs["results"]) and all(g["scope"] == "world" for g in graphs["results"])


def test_rest_errors_become_typed_exceptions_with_code_message_and_hint_and_no_key(alice_key):
    wrong = alice_key[:-4] + "zzzz"
    caught: dict[str, ExoGraphAPIError] = {}

    async def run() -> None:
        async with _client(wrong) as exo:
            try:
                await exo.graphs()
            except ExoGraphAPIError as exc:
                caught["auth"] = exc
            assert wrong not in repr(exo)
        async with _client(alice_key) as exo:
            try:
                await exo.search_entities(query="x", n_results=500)
            except ExoGraphAPIError as exc:
                caught["bounds"] = exc

    anyio.run(run)
    auth = caught["auth"]
    assert (auth.status, auth.code, auth.message) == (401, "invalid_api_key", "Unknown API key.")
    assert auth.hint == "Check the key, or create a new one on the API keys page."
    assert wrong not in str(auth)
    bounds = caught["bounds"]
    assert (bounds.status, bounds.code) == (
        400,
        "invalid",
    ) and "n_results: must be between 1 and 100." in bounds.message


def test_the_bridge_sends_through_exograph_client_and_reports_a_429_without_waiting():
    """One REST client: the bridge's errors are exograph_client's; a tool call does not sit out a Retry-After
    (the agent is told it), and transport failures name the bridge's setting."""
    import httpx
    from exograph_client import ExoGraphError

    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        body = {"error": {"code": "rate_limited", "message": "Too many requests.", "hint": "Slow down."}}
        return httpx.Response(429, json=body, headers={"Retry-After": "7"})

    async def run() -> ExoGraphAPIError:
        async with ExoGraphClient(
            base_url="http://exograph.test", api_key="exo_abcd_secret", transport=httpx.MockTransport(answer)
        ) as exo:
            try:
                await exo.post("/api/v1/chat/messages/", json={"message": "hi"}, idempotency_key="k-1")
            except ExoGraphAPIError as exc:
                return exc
        raise AssertionError("no error")

    error = anyio.run(run)
    assert isinstance(error, ExoGraphError) and (error.status, error.code, error.retry_after) == (
        429,
        "rate_limited",
        7,
    )
    assert len(seen) == 1 and seen[0].headers["Idempotency-Key"] == "k-1"
    assert (
        seen[0].headers["User-Agent"] == "exograph-mcp/1.0"
        and seen[0].headers["Authorization"] == "Bearer exo_abcd_secret"
    )

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    async def unreachable() -> ExoGraphAPIError:
        async with ExoGraphClient(
            base_url="http://exograph.test", api_key="exo_abcd_secret", transport=httpx.MockTransport(refuse)
        ) as exo:
            try:
                await exo.get("/api/v1/me/")
            except ExoGraphAPIError as exc:
                return exc
        raise AssertionError("no error")

    down = anyio.run(unreachable)
    assert (down.status, down.code) == (0, "connection_error") and "EXOGRAPH_API_URL" in down.hint
