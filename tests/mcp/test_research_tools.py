"""Research tools end to end: a session run to completion over loopback sources, over /mcp and over stdio."""

from __future__ import annotations

import anyio
import pytest

from billing.models import Hold
from billing.services import credit_balance
from exograph.accounts.services import api_key_create
from tests.mcp.conftest import mcp_story, text_of
from tests.research.conftest import quantum_world, world_source  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db(transaction=True)

TOPIC = "quantum error correction with surface codes"


async def _research_steps(mcp, out) -> None:  # type: ignore[no-untyped-def]
    arguments = {"query": TOPIC, "budget_credits": 40, "operation_id": "research-1"}
    out["created"] = await mcp.call_tool("create_research_session", arguments)
    out["retry"] = await mcp.call_tool("create_research_session", arguments)
    session_id = out["created"].structured_content["id"]
    for _ in range(120):  # eager in tests: usually done when create answers
        out["status"] = await mcp.call_tool("get_research_status", {"session_id": session_id})
        if out["status"].structured_content.get("status") in ("completed", "failed", "cancelled"):
            break
        await anyio.sleep(0.5)
    out["list"] = await mcp.call_tool("list_research_sessions", {"limit": 5})
    out["search"] = await mcp.call_tool("search_entities", {"query": "surface codes", "graph_scope": "private"})
    out["bounds"] = await mcp.call_tool("list_research_sessions", {"limit": 101})


def _check_research(out: dict[str, object], user) -> None:  # type: ignore[no-untyped-def]
    created = out["created"]
    assert not created.is_error, text_of(created)  # type: ignore[attr-defined]
    session = created.structured_content  # type: ignore[attr-defined]
    created_text = text_of(created)
    assert created_text.startswith("🔬 Research Session Created\n\nTopic: quantum error correction with surface codes")
    assert (
        f"Session ID: `{session['id']}`" in created_text
        and "Use get_research_status to check progress." in created_text
    )
    assert "Usage: 40 credits held" in created_text
    assert out["retry"].structured_content["id"] == session["id"]  # type: ignore[attr-defined]
    assert Hold.objects.filter(account__user=user).count() == 1  # the retry held nothing more
    status = out["status"]
    assert not status.is_error, text_of(status)  # type: ignore[attr-defined]
    detail = status.structured_content  # type: ignore[attr-defined]
    assert detail["status"] == "completed", detail
    status_text = text_of(status)
    assert status_text.startswith("📋 Research Session Status\n\nTopic: quantum error correction with surface codes")
    assert "Status: completed" in status_text and "✅ Research Complete!" in status_text
    assert "Completed: " in status_text and "Sources:" in status_text
    for source in detail["report"]["sources"]:
        assert f"[{source['number']}] " in status_text and source["title"] in status_text
    assert "Key findings:" in status_text
    assert credit_balance(account=user) == 100 - detail["credits_spent"]
    listed = text_of(out["list"])
    assert listed.startswith("📊 Research Sessions (")
    assert "✅ **quantum error correction with surface codes**" in listed and f"`{session['id']}`" in listed
    assert out["search"].structured_content["results"]  # type: ignore[attr-defined]
    assert out["bounds"].is_error and "less than or equal to 100" in text_of(out["bounds"])  # type: ignore[attr-defined]


def test_research_tools_end_to_end_over_streamable_http(live_server_asgi, alice, alice_key, fund, quantum_world):  # noqa: F811
    fund(alice, 100)
    _check_research(mcp_story(live_server_asgi.url, alice_key, _research_steps), alice)


def test_research_tools_end_to_end_over_stdio(live_server_asgi, alice, alice_key, fund, quantum_world):  # noqa: F811
    fund(alice, 100)
    _check_research(mcp_story(live_server_asgi.url, alice_key, _research_steps, stdio=True), alice)


def test_charlie_cannot_read_alices_research_and_restricted_keys_cannot_start_one(
    live_server_asgi, alice, alice_key, charlie, charlie_key, fund
):
    fund(alice, 100)
    fund(charlie, 100)

    async def alice_steps(mcp, out) -> None:  # type: ignore[no-untyped-def]
        out["created"] = await mcp.call_tool("create_research_session", {"query": "alice's secret topic"})

    alices = mcp_story(live_server_asgi.url, alice_key, alice_steps)["created"]
    assert not alices.is_error, text_of(alices)  # type: ignore[attr-defined]
    alice_id = alices.structured_content["id"]  # type: ignore[attr-defined]

    async def charlie_steps(mcp, out) -> None:  # type: ignore[no-untyped-def]
        out["own"] = await mcp.call_tool("create_research_session", {"query": "charlie's own topic"})
        out["get"] = await mcp.call_tool("get_research_status", {"session_id": alice_id})
        out["list"] = await mcp.call_tool("list_research_sessions", {})

    out = mcp_story(live_server_asgi.url, charlie_key, charlie_steps)
    assert out["get"].is_error and "Not found:" in text_of(out["get"]) and "HTTP 404" in text_of(out["get"])  # type: ignore[attr-defined]
    assert [s["topic"] for s in out["list"].structured_content["results"]] == ["charlie's own topic"]  # type: ignore[attr-defined]
    assert "secret" not in text_of(out["list"])

    reader = api_key_create(actor=alice, name="reader", read_only=True).secret
    capped = api_key_create(actor=alice, name="capped", monthly_credit_cap=10).secret
    before = credit_balance(account=alice)

    async def restricted_steps(mcp, out) -> None:  # type: ignore[no-untyped-def]
        out["try"] = await mcp.call_tool("create_research_session", {"query": TOPIC})

    refused_ro = mcp_story(live_server_asgi.url, reader, restricted_steps)["try"]
    assert refused_ro.is_error and "(HTTP 403, key_read_only)" in text_of(refused_ro)  # type: ignore[attr-defined]
    refused_cap = mcp_story(live_server_asgi.url, capped, restricted_steps, stdio=True)["try"]
    assert refused_cap.is_error  # type: ignore[attr-defined]
    assert "monthly credit cap is 10 credits; 0 were spent this month, 10 left, and this needs 30" in text_of(
        refused_cap
    )
    assert credit_balance(account=alice) == before
