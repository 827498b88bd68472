"""`exograph-mcp` over stdio, spawned by the SDK's stdio client against the live service."""

from __future__ import annotations

import re

import anyio
import pytest

from billing.services import credit_balance
from mcp_bridge.tools import CONTRACT_ORDER
from tests.documents.conftest import fixtures_dir
from tests.mcp.conftest import mcp_stdio, text_of

pytestmark = pytest.mark.django_db(transaction=True)

PDF = "pdf/pm_naacl06-shinyama.pdf"  # 8 pages: 13 credits; mentions "Information Extraction"


def test_five_tools_end_to_end_over_stdio(live_server_asgi, alice, alice_key, fund):
    fund(alice, 100)
    out: dict[str, object] = {}

    async def story() -> None:
        # The bridge reads file_path on its own machine and sends base64: no upload root needed on the server.
        async with mcp_stdio(live_server_asgi.url, key=alice_key, scope="world") as mcp:
            out["tools"] = sorted(tool.name for tool in (await mcp.list_tools()).tools)
            out["upload"] = await mcp.call_tool(
                "upload_document", {"file_path": str(fixtures_dir() / PDF), "operation_id": "op-1"}
            )
            out["retry"] = await mcp.call_tool(
                "upload_document", {"file_path": str(fixtures_dir() / PDF), "operation_id": "op-1"}
            )
            out["search"] = await mcp.call_tool("search_entities", {"query": "Information Extraction"})
            hits = out["search"].structured_content["results"]  # type: ignore[attr-defined]
            name = next(h["id"] for h in hits if h["name"] == "Information Extraction")
            out["world"] = await mcp.call_tool("get_world_graph", {"entity_id": name})
            out["graphs"] = await mcp.call_tool("list_graphs", {})
            out["documents"] = await mcp.call_tool("list_documents", {})
            out["bounds"] = await mcp.call_tool("search_entities", {"query": "x", "n_results": 101})

    anyio.run(story)
    assert out["tools"] == sorted(CONTRACT_ORDER)
    upload = out["upload"]
    assert not upload.is_error, text_of(upload)  # type: ignore[attr-defined]
    upload_text = text_of(upload)
    assert upload_text.startswith("✅ Document Uploaded Successfully")
    assert "Filename: pm_naacl06-shinyama.pdf" in upload_text and "Scope: 🌐 world" in upload_text
    assert "Document has been processed and indexed." in upload_text
    assert out["retry"].structured_content["id"] == upload.structured_content["id"]  # type: ignore[attr-defined]
    assert credit_balance(account=alice) == 100 - 13  # the retry with the same operation_id charged nothing
    search_text = text_of(out["search"])
    assert search_text.startswith("🔍 Search Results for 'Information Extraction' (🌐 world)")
    assert re.search(r"^\d+\. \*\*Information Extraction\*\*$", search_text, re.M)
    assert text_of(out["world"]).startswith("🌐 World Graph: Information Extraction")
    assert "Sources: pm_naacl06-shinyama.pdf" in text_of(out["world"])
    assert f"ID: `{upload.structured_content['graph_id']}`" in text_of(out["graphs"])  # type: ignore[attr-defined]
    assert "1. 🌐 **pm_naacl06-shinyama.pdf**" in text_of(out["documents"])
    assert out["bounds"].is_error and "less than or equal to 100" in text_of(out["bounds"])  # type: ignore[attr-defined]


def test_stdio_with_an_invalid_key_answers_a_clear_auth_error_and_logs_no_key(live_server_asgi, alice_key, tmp_path):
    wrong = alice_key[:-4] + "zzzz"
    out: dict[str, object] = {}
    log_path = tmp_path / "bridge.log"

    async def story() -> None:
        with log_path.open("w") as errlog:
            async with mcp_stdio(live_server_asgi.url, key=wrong, errlog=errlog) as mcp:
                out["result"] = await mcp.call_tool("list_graphs", {})

    anyio.run(story)
    log = log_path.read_text()
    assert "mcp tool list_graphs: REST 401 invalid_api_key" in log  # logs go to stderr, ids and codes only
    assert wrong not in log and alice_key[:12] not in log
    result = out["result"]
    assert result.is_error  # type: ignore[attr-defined]
    text = text_of(result)
    assert "Authentication failed: Unknown API key. Check the key, or create a new one on the API keys page." in text
    assert "HTTP 401" in text and wrong not in text


def test_upload_wait_and_output_size_are_bounded_by_the_settings(live_server_asgi, alice, alice_key, fund):
    import base64

    from tests.documents.conftest import docx_with_paragraphs

    fund(alice, 50)
    names = [f"Project Falcon{n:03d} Initiative" for n in range(60)]
    note = docx_with_paragraphs(*(f"The {name} was reviewed by Orbital Metrics Group." for name in names))
    out: dict[str, object] = {}

    async def story() -> None:
        async with mcp_stdio(
            live_server_asgi.url,
            key=alice_key,
            EXOGRAPH_MCP_UPLOAD_WAIT_SECONDS="0",
            EXOGRAPH_MCP_MAX_OUTPUT_CHARS="1500",
        ) as mcp:
            out["upload"] = await mcp.call_tool(
                "upload_document",
                {"file_content_base64": base64.b64encode(note).decode(), "filename": "falcon.docx"},
            )
            out["search"] = await mcp.call_tool(
                "search_entities", {"query": "Project Falcon Initiative", "n_results": 50}
            )

    anyio.run(story)
    upload = out["upload"]
    assert not upload.is_error, text_of(upload)  # type: ignore[attr-defined]
    document_id = upload.structured_content["id"]  # type: ignore[attr-defined]
    assert "Document has been processed" not in text_of(upload)
    assert (
        f"Still processing (pending, 0%) after 0 s. Check again with list_documents; document ID `{document_id}`."
        in text_of(upload)
    )
    search = out["search"]
    text = text_of(search)
    assert len(text) <= 1500
    truncated = search.structured_content["truncated"]  # type: ignore[attr-defined]
    assert truncated["shown"] + truncated["omitted"] == search.structured_content["count"] > truncated["shown"]  # type: ignore[attr-defined]
    assert len(search.structured_content["results"]) == truncated["shown"]  # type: ignore[attr-defined]
    assert f"… {truncated['omitted']} more item(s) not shown: this result is capped at 1,500 characters." in text


def test_the_checkout_script_runs_under_a_bare_path(live_server_asgi, alice_key):
    # A newcomer's make run probe: an MCP client (Claude Desktop's minimal PATH) spawning scripts/exograph-mcp found
    # /usr/bin/python3 by its `#!/usr/bin/env python3` and died with "No module named 'anyio'" before the handshake.
    import os

    from django.conf import settings
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root")}
    env.update(EXOGRAPH_API_URL=live_server_asgi.url, EXOGRAPH_API_KEY=alice_key)
    script = str(settings.BASE_DIR / "scripts" / "exograph-mcp")
    out: dict[str, object] = {}

    async def story() -> None:
        params = StdioServerParameters(command=script, args=[], env=env, cwd="/")
        async with stdio_client(params) as (read, write), ClientSession(read, write) as mcp:
            await mcp.initialize()
            out["graphs"] = await mcp.call_tool("list_graphs", {})

    anyio.run(story)
    assert not out["graphs"].is_error, text_of(out["graphs"])  # type: ignore[attr-defined]
    assert text_of(out["graphs"]).startswith("📊 Your Knowledge Graphs")
