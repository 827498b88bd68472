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
