"""The hosted bridge: streamable HTTP at /mcp on the service's ASGI app under uvicorn (lifespan on), the SDK's client."""

from __future__ import annotations

import re

import anyio
import httpx
import pytest
from django.conf import settings as django_settings

from billing.models import CreditEntry
from billing.services import credit_balance
from mcp_bridge.tools import CONTRACT_ORDER
from tests.documents.conftest import fixtures_dir
from tests.mcp.conftest import mcp_http, text_of

pytestmark = pytest.mark.django_db(transaction=True)

PDF = "pdf/pm_naacl06-shinyama.pdf"  # 8 pages: 13 credits; mentions "Information Extraction"
SMALL_PDF = "pdf/sf_pdflatex-4-pages.pdf"  # 4 pages: 9 credits


def test_five_tools_end_to_end_over_streamable_http(live_server_asgi, alice, alice_key, fund, settings):
    settings.EXOGRAPH_UPLOAD_ROOT = str(fixtures_dir().resolve())
    fund(alice, 100)
    url = f"{live_server_asgi.url}/mcp"
    out: dict[str, object] = {}

    async def story() -> None:
        async with mcp_http(url, key=alice_key, scope="world") as mcp:
            out["instructions"] = mcp.initialize_result.instructions if hasattr(mcp, "initialize_result") else None
            out["tools"] = {tool.name: tool for tool in (await mcp.list_tools()).tools}
            out["upload"] = await mcp.call_tool(
                "upload_document", {"file_path": str(fixtures_dir().resolve() / PDF), "graph_scope": "world"}
            )
            out["search"] = await mcp.call_tool("search_entities", {"query": "Information Extraction", "n_results": 5})
            hits = out["search"].structured_content["results"]  # type: ignore[attr-defined]
            hit = next(h for h in hits if h["name"] == "Information Extraction")
            out["world"] = await mcp.call_tool("get_world_graph", {"entity_id": hit["id"], "evidence": True})
            out["graphs"] = await mcp.call_tool("list_graphs", {})
            out["documents"] = await mcp.call_tool("list_documents", {})

    anyio.run(story)
    tools = out["tools"]
    assert set(tools) == set(CONTRACT_ORDER)  # type: ignore[arg-type]
    search_schema = tools["search_entities"].input_schema["properties"]["n_results"]  # type: ignore[index]
    assert (search_schema["default"], search_schema["minimum"], search_schema["maximum"]) == (10, 1, 100)
    assert tools["search_entities"].annotations.read_only_hint is True  # type: ignore[index]
    assert tools["upload_document"].annotations.destructive_hint is False  # type: ignore[index]
    assert tools["upload_document"].annotations.idempotent_hint is True  # type: ignore[index]
    assert tools["upload_document"].output_schema is not None  # type: ignore[index]

    upload = out["upload"]
    assert not upload.is_error, text_of(upload)  # type: ignore[attr-defined]
    upload_text = text_of(upload)
    assert upload_text.startswith("✅ Document Uploaded Successfully")
    assert "Filename: pm_naacl06-shinyama.pdf" in upload_text and "Pages: 8" in upload_text
    assert "Scope: 🌐 world" in upload_text and "Document has been processed and indexed." in upload_text
    document = upload.structured_content  # type: ignore[attr-defined]
    assert document["status"] == "processed" and f"Document ID: `{document['id']}`" in upload_text
    assert "Usage: 13 credits | Balance: 87 credits" in upload_text

    search_text = text_of(out["search"])
    assert search_text.startswith("🔍 Search Results for 'Information Extraction' (🌐 world)")
    assert re.search(r"^\d\. \*\*Information Extraction\*\*$", search_text, re.M)
    assert "1. **" in search_text and "Relevance: 1.00" in search_text and "   ID: `ent_" in search_text
    world = out["world"]
    assert not world.is_error, text_of(world)  # type: ignore[attr-defined]
    world_text = text_of(world)
    assert world_text.startswith("🌐 World Graph: Information Extraction")
    assert "Relationship:" in world_text and "Sources: pm_naacl06-shinyama.pdf" in world_text
    assert world.structured_content["entity"]["name"] == "Information Extraction"  # type: ignore[attr-defined]
    graphs_text = text_of(out["graphs"])
    assert graphs_text.startswith("📊 Your Knowledge Graphs (🌐 world)")
    assert f"ID: `{document['graph_id']}`" in graphs_text
    docs_text = text_of(out["documents"])
    assert docs_text.startswith("📄 Documents (🌐 world)")
    assert "1. 🌐 **pm_naacl06-shinyama.pdf**" in docs_text and f"Document ID: `{document['id']}`" in docs_text
    assert out["documents"].structured_content["results"][0]["id"] == document["id"]  # type: ignore[attr-defined]


def _docx_b64(*paragraphs: str) -> str:
    import base64

    from tests.documents.conftest import docx_with_paragraphs

    return base64.b64encode(docx_with_paragraphs(*paragraphs)).decode()


NOTE = _docx_b64(
    "The Zanzibar Quokka Foundation funds research on island ecology.",
    "Dr Amelia Tarkington leads the Zanzibar Quokka Foundation in Stone Town.",
)
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def _calls(url: str, key: str, calls: list[tuple[str, dict[str, object]]], **kwargs: str) -> list[object]:
    """Call the tools in order in one MCP session; returns their CallToolResults."""
    results: list[object] = []

    async def run() -> None:
        async with mcp_http(url, key=key, **kwargs) as mcp:
            for name, arguments in calls:
                results.append(await mcp.call_tool(name, arguments))

    anyio.run(run)
    return results


def test_missing_or_invalid_api_key_is_refused_with_401_before_the_mcp_app(live_server_asgi, alice_key):
    url = f"{live_server_asgi.url}/mcp"
    missing = httpx.post(url, json=INITIALIZE, headers=MCP_HEADERS)
    assert missing.status_code == 401 and missing.headers["WWW-Authenticate"].startswith("Bearer")
    assert missing.json()["error"]["code"] == "unauthenticated"
    assert "Authorization: Bearer" in missing.json()["error"]["hint"]
    wrong = alice_key[:-4] + "zzzz"
    invalid = httpx.post(url, json=INITIALIZE, headers={**MCP_HEADERS, "Authorization": f"Bearer {wrong}"})
    assert invalid.status_code == 401
    assert invalid.json()["error"] == {
        "code": "invalid_api_key",
        "message": "Unknown API key.",
        "hint": "Check the key, or create a new one on the API keys page.",
    }
    assert wrong not in invalid.text
    valid = httpx.post(url, json=INITIALIZE, headers={**MCP_HEADERS, "Authorization": f"Bearer {alice_key}"})
    assert valid.status_code == 200 and valid.json()["result"]["serverInfo"]["name"] == "exograph"
    assert "search_entities" in valid.json()["result"]["instructions"]


def test_out_of_bounds_n_results_is_refused_not_clamped(live_server_asgi, alice_key):
    too_many, too_few = _calls(
        f"{live_server_asgi.url}/mcp",
        alice_key,
        [("search_entities", {"query": "x", "n_results": 101}), ("search_entities", {"query": "x", "n_results": 0})],
    )
    assert too_many.is_error and "less than or equal to 100" in text_of(too_many)  # type: ignore[attr-defined]
    assert too_few.is_error and "greater than or equal to 1" in text_of(too_few)  # type: ignore[attr-defined]


def test_foreign_host_and_origin_are_refused(live_server_asgi, alice_key):
    url = f"{live_server_asgi.url}/mcp"
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {alice_key}"}
    foreign_host = httpx.post(url, json=INITIALIZE, headers={**headers, "Host": "evil.example"})
    assert foreign_host.status_code == 421
    foreign_origin = httpx.post(url, json=INITIALIZE, headers={**headers, "Origin": "http://evil.example"})
    assert foreign_origin.status_code == 403
    own_origin = httpx.post(url, json=INITIALIZE, headers={**headers, "Origin": django_settings.EXOGRAPH_PUBLIC_URL})
    assert own_origin.status_code == 200


def test_insufficient_credits_become_a_tool_error_with_the_message_and_hint(
    live_server_asgi, charlie, charlie_key, fund
):
    fund(charlie, 2 - credit_balance(account=charlie))
    (result,) = _calls(
        f"{live_server_asgi.url}/mcp",
        charlie_key,
        [("upload_document", {"file_content_base64": NOTE, "filename": "note.docx"})],
    )
    assert result.is_error  # type: ignore[attr-defined]
    text = text_of(result)
    assert "Insufficient credits: This needs 6 credits; the balance is 2." in text
    assert "ask an administrator to grant credits" in text and "HTTP 402" in text  # no Stripe in the tests
    assert credit_balance(account=charlie) == 2


def test_rate_limit_becomes_a_tool_error_saying_when_to_retry(live_server_asgi, alice_key, settings):
    settings.BILLING_PLANS = {**settings.BILLING_PLANS, "standard": {"per_minute": 2, "per_day": 1000}}
    first, second, third = _calls(
        f"{live_server_asgi.url}/mcp", alice_key, [("list_graphs", {}), ("list_graphs", {}), ("list_graphs", {})]
    )
    assert not first.is_error and not second.is_error  # type: ignore[attr-defined]
    assert third.is_error  # type: ignore[attr-defined]
    text = text_of(third)
    assert "Rate limit reached: 2 requests per minute for this account." in text
    assert "Rate limit reached: Rate limit reached" not in text  # the label once
    assert re.search(r"Retry after \d+ s\.", text) and "HTTP 429" in text


def test_retried_upload_with_the_same_operation_id_returns_the_first_result_and_charges_once(
    live_server_asgi, alice, alice_key, fund
):
    fund(alice, 50)
    before = credit_balance(account=alice)
    arguments = {"file_content_base64": NOTE, "filename": "note.docx", "operation_id": "upload-note-1"}
    first, retry = _calls(
        f"{live_server_asgi.url}/mcp", alice_key, [("upload_document", arguments), ("upload_document", arguments)]
    )
    assert not first.is_error and not retry.is_error, text_of(first) + text_of(retry)  # type: ignore[attr-defined]
    assert retry.structured_content["id"] == first.structured_content["id"]  # type: ignore[attr-defined]
    assert retry.structured_content["credits_charged"] == 6  # type: ignore[attr-defined]
    assert credit_balance(account=alice) == before - 6
    assert CreditEntry.objects.filter(account__user=alice, kind="charge").count() == 1


def test_charlie_cannot_see_alices_private_items(live_server_asgi, alice, alice_key, charlie, charlie_key, fund):
    fund(alice, 50)
    url = f"{live_server_asgi.url}/mcp"
    (upload, alice_search) = _calls(
        url,
        alice_key,
        [
            ("upload_document", {"file_content_base64": NOTE, "filename": "quokka.docx", "graph_scope": "private"}),
            ("search_entities", {"query": "Zanzibar Quokka Foundation", "graph_scope": "private"}),
        ],
    )
    assert not upload.is_error, text_of(upload)  # type: ignore[attr-defined]
    assert "Zanzibar Quokka Foundation" in text_of(alice_search)  # the positive control
    # charlie has data of his own: a private graph.
    own = httpx.post(
        f"{live_server_asgi.url}/api/v1/graphs/",
        json={"name": "Charlie's notes", "graph_scope": "private"},
        headers={"Authorization": f"Bearer {charlie_key}"},
    )
    assert own.status_code == 201, own.text
    documents, graphs, private_search, world_search, world = _calls(
        url,
        charlie_key,
        [
            ("list_documents", {"graph_scope": "private"}),
            ("list_graphs", {"graph_scope": "private"}),
            ("search_entities", {"query": "Zanzibar Quokka Foundation", "graph_scope": "private"}),
            ("search_entities", {"query": "Zanzibar Quokka Foundation", "graph_scope": "world"}),
            ("get_world_graph", {"entity_id": "Zanzibar Quokka Foundation"}),
        ],
    )
    alice_document = upload.structured_content  # type: ignore[attr-defined]
    assert documents.structured_content["results"] == []  # type: ignore[attr-defined]
    assert "quokka.docx" not in text_of(documents)
    assert [g["name"] for g in graphs.structured_content["results"]] == ["Charlie's notes"]  # type: ignore[attr-defined]
    assert alice_document["graph_id"] not in text_of(graphs)
    for search in (private_search, world_search):
        assert not any("Quokka" in hit["name"] for hit in search.structured_content["results"])  # type: ignore[attr-defined]
    assert world.is_error and "Not found: No entity 'Zanzibar Quokka Foundation' in the World Graph." in text_of(world)  # type: ignore[attr-defined]


def test_request_body_over_the_cap_is_refused_before_the_tools(live_server_asgi, alice_key):
    oversized = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "pad": "' + b"x" * (16 * 1024 * 1024) + b'"}'
    response = httpx.post(
        f"{live_server_asgi.url}/mcp",
        content=oversized,
        headers={**MCP_HEADERS, "Authorization": f"Bearer {alice_key}"},
        timeout=60,
    )
    assert response.status_code == 413


def test_bridge_and_sdk_logs_carry_no_query_text_and_no_key(live_server_asgi, alice_key, caplog):
    import logging

    caplog.set_level(logging.INFO)
    secret_words = "Zebra Quasar Unicornium"
    search, world = _calls(
        f"{live_server_asgi.url}/mcp",
        alice_key,
        [("search_entities", {"query": secret_words}), ("get_world_graph", {"entity_id": secret_words})],
    )
    assert not search.is_error and world.is_error  # type: ignore[attr-defined]
    assert secret_words in text_of(world)  # the caller sees what was not found...
    # django.request's own "Not Found: <path>" line is the REST API's (the same without MCP), left out here.
    logged = "\n".join(r.getMessage() for r in caplog.records if r.name != "django.request")
    assert "mcp tool get_world_graph: REST 404 entity_not_found" in logged  # ...the log keeps ids and codes only
    assert secret_words not in logged and "Unicornium" not in logged
    assert alice_key not in logged
