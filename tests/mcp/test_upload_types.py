"""upload_document takes every file the product takes (the REST API and the web form: PDF, Word, plain text,
Markdown), says so in its description, in the empty document list and when it refuses a file of another kind;
through the SDK's real client over streamable HTTP at /mcp and over stdio."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from billing.models import CreditEntry
from billing.services import credit_balance
from exograph.documents.models import Document
from exograph.documents.validation import ACCEPTED_LABEL, EXTENSIONS
from mcp_bridge.config import DEFAULT_UPLOAD_TYPES
from tests.mcp.conftest import mcp_http, mcp_run, mcp_stdio, text_of

pytestmark = pytest.mark.django_db(transaction=True)

FIELD_NOTES = (
    "Harbour survey, third week of March.\n\n"
    "The ferry pier at Kettle Cove lost two pilings in the February storm. Mara Lindqvist, the harbour master, "
    "closed the east berth and moved the lobster boats to the old cannery wharf until the repair crew arrives.\n"
)


def _names_every_kind(text: str) -> bool:
    return all(kind in text for kind in (".pdf", ".docx", ".txt", ".md"))


def test_hosted_upload_takes_a_plain_text_file_and_says_it_does(live_server_asgi, alice, alice_key, fund, settings):
    settings.MCP_UPLOAD_WAIT_SECONDS = 60
    fund(alice, 40)
    encoded = base64.b64encode(FIELD_NOTES.encode()).decode("ascii")

    async def steps(mcp: Any, out: dict[str, Any]) -> None:
        out["tools"] = {tool.name: tool for tool in (await mcp.list_tools()).tools}
        out["empty"] = await mcp.call_tool("list_documents", {})
        out["spreadsheet"] = await mcp.call_tool(
            "upload_document", {"file_content_base64": encoded, "filename": "harbour.xlsx"}
        )
        out["text"] = await mcp.call_tool(
            "upload_document", {"file_content_base64": encoded, "filename": "harbour-survey.txt"}
        )

    out = mcp_run(mcp_http(f"{live_server_asgi.url}/mcp", key=alice_key), steps)
    tool = out["tools"]["upload_document"]
    assert _names_every_kind(tool.description), tool.description
    assert "PDF or DOCX)" not in tool.description
    assert ".pdf or .docx" not in tool.input_schema["properties"]["filename"]["description"]
    assert "Upload a PDF or DOCX" not in text_of(out["empty"])
    assert "No documents yet" in text_of(out["empty"]) and _names_every_kind(text_of(out["empty"]))

    refused = out["spreadsheet"]
    assert refused.is_error and _names_every_kind(text_of(refused)), text_of(refused)
    assert "harbour.xlsx" in text_of(refused)

    uploaded = out["text"]
    assert not uploaded.is_error, text_of(uploaded)
    assert "Filename: harbour-survey.txt" in text_of(uploaded)
    assert "Document has been processed and indexed." in text_of(uploaded)
    document = Document.objects.get()
    assert document.filename == "harbour-survey.txt" and document.content_type == "text"
    charged = -sum(CreditEntry.objects.filter(kind="charge").values_list("amount", flat=True))
    assert charged > 0 and credit_balance(account=alice) == 40 - charged


def test_stdio_upload_reads_a_local_text_file_and_names_the_kinds_it_takes(
    live_server_asgi, alice, alice_key, fund, tmp_path
):
    fund(alice, 40)
    notes = tmp_path / "kettle-cove.md"
    notes.write_text("# Kettle Cove\n\n" + FIELD_NOTES, encoding="utf-8")
    missing = tmp_path / "nowhere.txt"

    async def steps(mcp: Any, out: dict[str, Any]) -> None:
        out["tools"] = {tool.name: tool for tool in (await mcp.list_tools()).tools}
        out["missing"] = await mcp.call_tool("upload_document", {"file_path": str(missing)})
        out["text"] = await mcp.call_tool("upload_document", {"file_path": str(notes)})

    out = mcp_run(mcp_stdio(live_server_asgi.url, key=alice_key), steps)
    tool = out["tools"]["upload_document"]
    assert _names_every_kind(tool.description)
    assert ".pdf or .docx" not in tool.input_schema["properties"]["file_path"]["description"]
    assert out["missing"].is_error and _names_every_kind(text_of(out["missing"])), text_of(out["missing"])
    uploaded = out["text"]
    assert not uploaded.is_error, text_of(uploaded)
    assert "Document has been processed and indexed." in text_of(uploaded)
    assert Document.objects.get().content_type == "markdown"


def test_the_stdio_bridge_starts_from_the_servers_own_upload_rule():
    """The stdio bridge may not import the server (tests/mcp/test_layering.py): its words for the files an upload
    takes must be the upload rule's, and that rule must name every extension the server accepts but aliases."""
    assert DEFAULT_UPLOAD_TYPES == ACCEPTED_LABEL
    kinds = set(EXTENSIONS.values())
    named = {EXTENSIONS[word] for word in ACCEPTED_LABEL.replace(",", " ").split() if word in EXTENSIONS}
    assert named == kinds
