"""Chat tools and restricted keys end to end: the SDK's client over streamable HTTP at /mcp and over stdio."""

from __future__ import annotations

import pytest

from billing.models import CreditEntry
from billing.services import credit_balance
from exograph.accounts.services import api_key_create
from tests.mcp.conftest import mcp_story, text_of
from tests.mcp.test_http import NOTE

pytestmark = pytest.mark.django_db(transaction=True)

QUESTION = "Who leads the Zanzibar Quokka Foundation?"


async def _chat_steps(mcp, out) -> None:  # type: ignore[no-untyped-def]
    out["upload"] = await mcp.call_tool("upload_document", {"file_content_base64": NOTE, "filename": "quokka.docx"})
    out["created"] = await mcp.call_tool(
        "create_chat_session", {"title": "Quokka questions", "reasoning_engine": "graph"}
    )
    session_id = out["created"].structured_content["id"]
    arguments = {"message": QUESTION, "session_id": session_id, "operation_id": "ask-1"}
    out["reply"] = await mcp.call_tool("send_chat_message", arguments)
    out["retry"] = await mcp.call_tool("send_chat_message", arguments)
    out["new"] = await mcp.call_tool("send_chat_message", {"message": "When was the foundation set up?"})
    out["list"] = await mcp.call_tool("list_chat_sessions", {})
    out["bounds"] = await mcp.call_tool("create_chat_session", {"model_name": "huge"})


def _check_chat(out: dict[str, object], user) -> None:  # type: ignore[no-untyped-def]
    assert not out["upload"].is_error, text_of(out["upload"])  # type: ignore[attr-defined]
    created = out["created"]
    assert not created.is_error, text_of(created)  # type: ignore[attr-defined]
    created_text = text_of(created)
    session = created.structured_content  # type: ignore[attr-defined]
    assert created_text.startswith("💬 Chat Session Created\n\nTitle: Quokka questions")
    assert f"Session ID: `{session['id']}`" in created_text and "Scope: 🔒 private" in created_text
    assert "Model: snap" in created_text and "Engine: graph" in created_text
    reply = out["reply"]
    assert not reply.is_error, text_of(reply)  # type: ignore[attr-defined]
    reply_text = text_of(reply)
    body = reply.structured_content  # type: ignore[attr-defined]
    assert reply_text.startswith("💬 Chat Response\n\n")
    assert "Amelia Tarkington" in body["answer"] and body["answer"] in reply_text
    assert "Sources:" in reply_text and "quokka.docx" in reply_text
    assert body["session_id"] == session["id"] and body["credits_charged"] == 3
    assert reply_text.endswith(f"Usage: 3 credits | Balance: {body['balance']} credits")
    retry = out["retry"].structured_content  # type: ignore[attr-defined]
    assert retry["message_id"] == body["message_id"]  # the same operation_id: the first answer, charged once
    new = out["new"].structured_content  # type: ignore[attr-defined]
    assert new["session_id"] != session["id"]  # no session_id: a new session
    # the note never says when the foundation was set up: refused, and its charge refunded
    assert new["answered"] is False and new["usage"]["credits"] == 0, new
    charges = CreditEntry.objects.filter(account__user=user, kind="charge", reference="chat message")
    assert charges.count() == 2
    listed = text_of(out["list"])
    assert listed.startswith("💬 Chat Sessions (")
    assert "**Quokka questions**" in listed and f"Session ID: `{session['id']}`" in listed
    assert {s["id"] for s in out["list"].structured_content["results"]} == {session["id"], new["session_id"]}  # type: ignore[attr-defined]
    bounds = out["bounds"]
    assert bounds.is_error and "snap" in text_of(bounds) and "ponder" in text_of(bounds)  # type: ignore[attr-defined]


def test_chat_tools_end_to_end_over_streamable_http(live_server_asgi, alice, alice_key, fund):
    fund(alice, 100)
    out = mcp_story(live_server_asgi.url, alice_key, _chat_steps)
    _check_chat(out, alice)
    assert credit_balance(account=alice) == 100 - 6 - 3  # the upload, one answer; the refused one refunded


def test_chat_tools_end_to_end_over_stdio(live_server_asgi, alice, alice_key, fund):
    fund(alice, 100)
    out = mcp_story(live_server_asgi.url, alice_key, _chat_steps, stdio=True)
    _check_chat(out, alice)


def test_charlies_chat_tools_cannot_see_or_continue_alices_sessions(
    live_server_asgi, alice, alice_key, charlie, charlie_key, fund
):
    fund(alice, 50)
    fund(charlie, 50)

    async def alice_steps(mcp, out) -> None:  # type: ignore[no-untyped-def]
        out["session"] = await mcp.call_tool("create_chat_session", {"title": "Alice's secret plans"})

    alices = mcp_story(live_server_asgi.url, alice_key, alice_steps)["session"].structured_content  # type: ignore[attr-defined]

    async def charlie_steps(mcp, out) -> None:  # type: ignore[no-untyped-def]
        out["own"] = await mcp.call_tool("create_chat_session", {"title": "Charlie's own"})
        out["list"] = await mcp.call_tool("list_chat_sessions", {})
        out["send"] = await mcp.call_tool("send_chat_message", {"message": "hi", "session_id": alices["id"]})

    out = mcp_story(live_server_asgi.url, charlie_key, charlie_steps)
    assert [s["title"] for s in out["list"].structured_content["results"]] == ["Charlie's own"]  # type: ignore[attr-defined]
    assert "Alice's secret plans" not in text_of(out["list"])
    assert out["send"].is_error and "Not found:" in text_of(out["send"])  # type: ignore[attr-defined]
    assert "HTTP 404" in text_of(out["send"])
    assert credit_balance(account=charlie) == 50


def test_a_read_only_key_searches_but_its_upload_and_chat_are_refused_naming_its_permission(
    live_server_asgi, alice, fund
):
    fund(alice, 50)
    reader = api_key_create(actor=alice, name="reader", read_only=True).secret

    async def steps(mcp, out) -> None:  # type: ignore[no-untyped-def]
        out["search"] = await mcp.call_tool("search_entities", {"query": "anything"})
        out["graphs"] = await mcp.call_tool("list_graphs", {})
        out["upload"] = await mcp.call_tool("upload_document", {"file_content_base64": NOTE, "filename": "n.docx"})
        out["chat"] = await mcp.call_tool("send_chat_message", {"message": "hello"})

    for stdio in (False, True):
        out = mcp_story(live_server_asgi.url, reader, steps, stdio=stdio)
        assert not out["search"].is_error and not out["graphs"].is_error  # type: ignore[attr-defined]
        for name, path in (("upload", "/api/v1/documents/"), ("chat", "/api/v1/chat/messages/")):
            result = out[name]
            assert result.is_error  # type: ignore[attr-defined]
            text = text_of(result)
            assert "Not allowed: This API key (exo_***…) is read-only: it may search, explore and list" in text
            assert f"not POST {path}" in text and text.endswith("(HTTP 403, key_read_only)")
            assert reader not in text and reader[4:16] not in text  # the key is masked, its prefix too
    assert credit_balance(account=alice) == 50


def test_a_capped_keys_chat_past_the_cap_is_refused_with_what_is_left(live_server_asgi, alice, fund):
    fund(alice, 50)
    # The note is uploaded with another key: the capped key spends only on chat. The first question is
    # one the note answers (an answer the documents don't hold is refunded and would not count).
    uploader = api_key_create(actor=alice, name="uploader").secret

    async def upload(mcp, out) -> None:  # type: ignore[no-untyped-def]
        out["upload"] = await mcp.call_tool("upload_document", {"file_content_base64": NOTE, "filename": "quokka.docx"})

    uploaded = mcp_story(live_server_asgi.url, uploader, upload)
    assert not uploaded["upload"].is_error, text_of(uploaded["upload"])  # type: ignore[attr-defined]
    after_upload = credit_balance(account=alice)
    capped = api_key_create(actor=alice, name="agent", monthly_credit_cap=5).secret

    async def steps(mcp, out) -> None:  # type: ignore[no-untyped-def]
        out["first"] = await mcp.call_tool("send_chat_message", {"message": QUESTION, "reasoning_engine": "graph"})
        out["second"] = await mcp.call_tool("send_chat_message", {"message": "What does the foundation fund?"})

    out = mcp_story(live_server_asgi.url, capped, steps)
    assert not out["first"].is_error, text_of(out["first"])  # type: ignore[attr-defined]
    assert out["first"].structured_content["grounded"] is True  # type: ignore[attr-defined]
    second = out["second"]
    assert second.is_error  # type: ignore[attr-defined]
    assert (
        "Not allowed: This API key's monthly credit cap is 5 credits; 3 were spent this month, 2 left, "
        "and this needs 3. Raise the key's monthly cap on the API keys page" in text_of(second)
    )
    assert "(HTTP 403, key_monthly_cap_reached)" in text_of(second)
    assert credit_balance(account=alice) == after_upload - 3
