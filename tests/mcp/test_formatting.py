"""The tool texts follow the contract's examples; long results are cut at the cap and say so."""

from __future__ import annotations

from mcp_bridge.client import mask_secrets
from mcp_bridge.formatting import (
    format_documents,
    format_error,
    format_graphs,
    format_search,
    format_upload,
    format_world_graph,
)

LIMIT = 40_000


def _hit(n: int, **extra: object) -> dict[str, object]:
    return {
        "id": f"ent_{n:04d}",
        "name": f"quantum thing {n}",
        "type": "concept",
        "graph_id": "world",
        "graph_name": "World Graph",
        "relevance": 1.0 / n,
        "context": "Techniques to protect quantum information " * 3,
        **extra,
    }


def test_search_text_has_heading_count_numbered_bold_names_ids_relevance_and_context():
    response = {"query": "quantum computing", "count": 2, "results": [_hit(1), _hit(2)]}
    text = format_search(response, scope="world", limit=LIMIT).text
    lines = text.splitlines()
    assert lines[0] == "🔍 Search Results for 'quantum computing' (🌐 world)"
    assert "Found 2 entities:" in text
    assert "1. **quantum thing 1**" in lines and "2. **quantum thing 2**" in lines
    assert "   ID: `ent_0001`" in lines
    assert "   Relevance: 1.00" in lines and "   Relevance: 0.50" in lines
    assert any(line.startswith("   Context: Techniques to protect quantum information") for line in lines)
    assert text.endswith("API Cost: Free (search operations)")


def test_search_without_hits_says_so_and_suggests_the_next_step():
    text = format_search({"query": "nothing", "count": 0, "results": []}, scope="private", limit=LIMIT).text
    assert text.startswith("🔍 Search Results for 'nothing' (🔒 private)")
    assert "Found 0 entities:" in text and "Nothing matched." in text


def test_world_graph_text_lists_related_with_relationship_strength_and_sources():
    response = {
        "entity": {"id": "ent_nn", "name": "neural networks", "type": "concept", "mentions": 20, "description": ""},
        "related": [
            {
                "id": "ent_dl",
                "name": "deep learning",
                "relationship": "is_type_of",
                "direction": "outgoing",
                "strength": 15,
                "sources": ["paper_123.pdf", "doc_456.pdf"],
            },
            {
                "id": "ent_bp",
                "name": "backpropagation",
                "relationship": "uses_technique",
                "direction": "incoming",
                "strength": 1,
                "sources": [],
            },
        ],
        "count": 2,
    }
    text = format_world_graph(response, limit=LIMIT).text
    lines = text.splitlines()
    assert lines[0] == "🌐 World Graph: neural networks"
    assert "Found 2 related entities:" in lines
    assert "→ **deep learning**" in lines and "← **backpropagation**" in lines
    assert "   Relationship: is_type_of" in lines
    assert "   Strength: 15 connections" in lines and "   Strength: 1 connection" in lines
    assert "   Sources: paper_123.pdf, doc_456.pdf" in lines


def test_graph_list_marks_world_and_private_and_gives_ids_in_backticks():
    response = {
        "count": 2,
        "results": [
            {
                "id": "graph_abc",
                "name": "ML Papers",
                "scope": "world",
                "type": "document",
                "created": "2025-10-15T10:00:00Z",
            },
            {
                "id": "graph_def",
                "name": "Notes",
                "scope": "private",
                "type": "manual",
                "created": "2025-10-20T10:00:00Z",
            },
        ],
    }
    lines = format_graphs(response, scope="private", limit=LIMIT).text.splitlines()
    assert lines[0].startswith("📊 Your Knowledge Graphs")
    assert "Found 2 graph(s):" in lines
    assert "1. 🌐 **ML Papers**" in lines and "2. 🔒 **Notes**" in lines
    assert "   ID: `graph_abc`" in lines and "   Scope: world" in lines
    assert "   Created: 2025-10-15" in lines and "   Type: document" in lines


def test_document_list_says_how_to_get_the_next_page():
    docs = [
        {
            "id": f"doc-{n}",
            "filename": f"paper_{n}.pdf",
            "pages": 3,
            "created": "2025-11-06T01:02:03Z",
            "scope": "world",
            "status": "processed",
        }
        for n in range(2)
    ]
    text = format_documents({"count": 5, "results": docs}, scope="world", limit=LIMIT).text
    lines = text.splitlines()
    assert lines[0] == "📄 Documents (🌐 world)"
    assert "1. 🌐 **paper_0.pdf**" in lines and "   Document ID: `doc-0`" in lines and "   Pages: 3" in lines
    assert "Showing 2 of 5 documents. Call list_documents with offset=2 for the next page." in text


def test_upload_text_reports_processed_or_still_processing_with_the_id():
    document = {
        "id": "00f1e557",
        "filename": "research_paper.pdf",
        "pages": 15,
        "scope": "world",
        "graph_id": "graph_1",
        "status": "processing",
        "progress": 40,
        "credits_charged": 20,
        "balance": 980,
    }
    done = format_upload({**document, "status": "processed"}, processed=True, waited_seconds=3).splitlines()
    assert done[0] == "✅ Document Uploaded Successfully"
    assert "Document ID: `00f1e557`" in done and "Scope: 🌐 world" in done and "Graph ID: `graph_1`" in done
    assert "Document has been processed and indexed." in done
    assert "Usage: 20 credits | Balance: 980 credits" in done
    waiting = format_upload(document, processed=False, waited_seconds=60)
    assert "Document has been processed" not in waiting
    assert "Still processing (processing, 40%) after 60 s" in waiting and "`00f1e557`" in waiting


def test_long_result_is_cut_at_the_cap_and_says_what_was_left_out():
    response = {"query": "q", "count": 100, "results": [_hit(n, context="x" * 300) for n in range(1, 101)]}
    page = format_search(response, scope="world", limit=5_000)
    assert len(page.text) <= 5_000
    assert 0 < page.shown < 100 and page.cut
    assert f"… {100 - page.shown} more item(s) not shown: this result is capped at 5,000 characters." in page.text
    assert "n_results" in page.text


def test_error_text_keeps_message_hint_and_retry_time():
    text = format_error(status=429, code="rate_limited", message="Rate limit reached.", hint="Wait.", retry_after=42)
    assert text.startswith("Rate limit reached. Retry after 42 s. Wait.")  # the label is not said twice
    text = format_error(status=429, code="rate_limited", message="Rate limit reached: 2 requests per minute.")
    assert text == "Rate limit reached: 2 requests per minute. (HTTP 429, rate_limited)"
    assert format_error(status=404, code="not_found", message="No such graph.").startswith("Not found: No such graph.")
    text = format_error(
        status=402,
        code="insufficient_credits",
        message="This needs 9 credits; the balance is 2.",
        hint="Buy credits on the billing page.",
    )
    assert text.startswith(
        "Insufficient credits: This needs 9 credits; the balance is 2. Buy credits on the billing page."
    )


def test_keys_and_bearer_tokens_are_masked():
    text = mask_secrets("key exo_abcd1234_secretsecret and Authorization: Bearer sometoken123 end")
    assert "secretsecret" not in text and "sometoken123" not in text
    assert "exo_***" in text and "Bearer ***" in text
