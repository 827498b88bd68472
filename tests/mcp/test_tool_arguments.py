"""Unknown tool arguments are refused, never dropped: through the SDK's real client over streamable HTTP at /mcp and
over stdio. upload_document takes graph_id (as POST /api/v1/documents/ does)."""

from __future__ import annotations

from typing import Any

import pytest

from billing.models import CreditEntry
from billing.services import credit_balance
from exograph.core.scope import Scope
from exograph.documents.models import Document
from exograph.graphs.services import graph_create
from tests.mcp.conftest import mcp_http, mcp_run, mcp_stdio, text_of
from tests.mcp.test_http import NOTE

pytestmark = pytest.mark.django_db(transaction=True)


def _assert_refused_naming(result: Any, unknown: str, accepted: tuple[str, ...], nearest: str | None) -> None:
    assert result.is_error
    text = text_of(result)
    assert f"does not take the argument '{unknown}'" in text and "nothing was charged" in text
    assert "It takes: " + ", ".join(accepted) + "." in text
    # As the REST API's unknown_field hint: the nearest accepted name, and no guess when none is near.
    assert (f"Did you mean '{nearest}'?" in text) if nearest else ("Did you mean" not in text)


def test_an_upload_with_an_unknown_argument_is_refused_naming_it_and_charges_nothing(
    live_server_asgi, alice, alice_key, fund, settings
):
    settings.MCP_UPLOAD_WAIT_SECONDS = 0
    fund(alice, 50)

    async def steps(mcp: Any, out: dict[str, Any]) -> None:
        out["tools"] = {tool.name: tool for tool in (await mcp.list_tools()).tools}
        out["upload"] = await mcp.call_tool(
            "upload_document", {"file_content_base64": NOTE, "filename": "note.docx", "graph_idd": "g1"}
        )
        out["search"] = await mcp.call_tool("search_entities", {"query": "quokka", "limit": 3})

    out = mcp_run(mcp_http(f"{live_server_asgi.url}/mcp", key=alice_key), steps)
    upload_args = ("file_path", "file_content_base64", "filename", "graph_scope", "graph_id", "operation_id")
    _assert_refused_naming(out["upload"], "graph_idd", upload_args, "graph_id")
    _assert_refused_naming(out["search"], "limit", ("query", "n_results", "graph_id", "graph_scope"), None)
    assert credit_balance(account=alice) == 50
    assert not Document.objects.exists() and not CreditEntry.objects.filter(kind="charge").exists()
    schema = out["tools"]["upload_document"].input_schema
    assert schema["additionalProperties"] is False and "graph_id" in schema["properties"]
    assert all(tool.input_schema["additionalProperties"] is False for tool in out["tools"].values())


def test_upload_document_takes_graph_id_and_uploads_into_that_graph(live_server_asgi, alice, alice_key, fund, settings):
    settings.MCP_UPLOAD_WAIT_SECONDS = 0
    fund(alice, 50)
    chosen = graph_create(actor=alice, name="Island ecology", scope=Scope.PRIVATE)

    async def steps(mcp: Any, out: dict[str, Any]) -> None:
        out["upload"] = await mcp.call_tool(
            "upload_document", {"file_content_base64": NOTE, "filename": "note.docx", "graph_id": chosen.id}
        )

    out = mcp_run(mcp_http(f"{live_server_asgi.url}/mcp", key=alice_key), steps)
    assert not out["upload"].is_error, text_of(out["upload"])
    assert out["upload"].structured_content["graph_id"] == chosen.id
    assert Document.objects.get().graph_id == chosen.id


def test_stdio_refuses_unknown_arguments_too(live_server_asgi, alice, alice_key, fund):
    fund(alice, 50)

    async def steps(mcp: Any, out: dict[str, Any]) -> None:
        out["upload"] = await mcp.call_tool(
            "upload_document", {"file_content_base64": NOTE, "filename": "note.docx", "graph_idd": "g1"}
        )

    out = mcp_run(mcp_stdio(live_server_asgi.url, key=alice_key), steps)
    assert out["upload"].is_error and "'graph_idd'" in text_of(out["upload"])
    assert credit_balance(account=alice) == 50 and not Document.objects.exists()


def test_an_argument_of_the_wrong_shape_is_refused_in_plain_words_naming_it_and_charges_nothing(
    live_server_asgi, alice, alice_key, fund
):
    """The SDK's own refusal is pydantic's report ('1 validation error for create_research_sessionArguments ...
    For further information visit https://errors.pydantic.dev/...'); an agent or its user reads which argument is
    wrong, what it must be, and that nothing was done or charged."""
    fund(alice, 50)

    async def steps(mcp: Any, out: dict[str, Any]) -> None:
        out["short"] = await mcp.call_tool("create_research_session", {"query": "x"})
        out["missing"] = await mcp.call_tool("send_chat_message", {})
        out["scope"] = await mcp.call_tool("search_entities", {"query": "kelp", "graph_scope": "everyone"})

    out = mcp_run(mcp_http(f"{live_server_asgi.url}/mcp", key=alice_key), steps)
    texts = {key: text_of(result) for key, result in out.items()}
    assert all(result.is_error for result in out.values()), texts
    for text in texts.values():
        assert "validation error" not in text and "pydantic" not in text and "Arguments" not in text, text
        assert "nothing was done and nothing was charged" in text, text
    assert "create_research_session: 'query'" in texts["short"] and "at least 3 characters" in texts["short"]
    assert "send_chat_message: 'message' is required" in texts["missing"]
    assert "'graph_scope'" in texts["scope"] and "'world' or 'private'" in texts["scope"]
    assert "'everyone'" in texts["scope"]  # what was sent, to compare
    assert credit_balance(account=alice) == 50
    assert not CreditEntry.objects.filter(kind__in=["charge", "hold"]).exists()
