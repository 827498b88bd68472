"""Chat and research tool texts, against sample payloads of the chat REST API and the research contract."""

from __future__ import annotations

from mcp_bridge.formatting import (
    cursor_of,
    format_chat_reply,
    format_chat_session_created,
    format_chat_sessions,
    format_error,
    format_research_created,
    format_research_sessions,
    format_research_status,
)

LIMIT = 40_000
SESSION = {
    "id": "61124873-a318-47be-9ffe-3d6e220df3d1",
    "title": "Machine Learning Discussion",
    "model_name": "snap",
    "reasoning_engine": "graph",
    "graph_scope": "world",
    "graph_id": None,
    "created": "2025-11-06T10:00:00+00:00",
    "updated": "2025-11-06T11:00:00+00:00",
}
RESEARCH = {
    "id": "550e8400-e29b-41d4-a716-446655440000",
    "topic": "transformer architectures",
    "status": "pending",
    "scope": "world",
    "graph_id": "world",
    "graph_name": "World Graph",
    "model": "snap",
    "created": "2025-10-26T14:30:12+00:00",
    "completed": None,
    "progress": {"step": "queued", "percent": 0, "sources_found": 0, "sources_read": 0},
    "credits_held": 30,
    "credits_spent": 0,
    "note": "",
    "error": "",
    "report": None,
    "papers": 0,
    "articles": 0,
    "watch": None,
}
REPORT = {
    "summary": "Transformers replace recurrence with attention.",
    "findings": [
        {"text": "Self-attention scales quadratically with length.", "citations": [1, 2]},
        {"text": "Sparse attention reduces the cost.", "citations": [2]},
    ],
    "open_questions": ["How far do linear-attention variants close the gap?"],
    "sources": [
        {
            "number": 1,
            "title": "Attention Is All You Need",
            "url": "https://arxiv.org/abs/1706.03762",
            "kind": "paper",
            "published": "2017-06-12",
            "document_id": "doc-1",
        },
        {
            "number": 2,
            "title": "Longformer",
            "url": "https://example.org/longformer",
            "kind": "article",
            "published": None,
            "document_id": None,
        },
    ],
}


def test_chat_session_created_text_follows_the_contract():
    lines = format_chat_session_created(SESSION).splitlines()
    assert lines[:2] == ["💬 Chat Session Created", ""]
    assert "Title: Machine Learning Discussion" in lines
    assert "Session ID: `61124873-a318-47be-9ffe-3d6e220df3d1`" in lines
    assert "Scope: 🌐 world" in lines and "Model: snap" in lines and "Engine: graph" in lines
    assert lines[-1] == "API Cost: Free (session creation)"
    untitled = format_chat_session_created({**SESSION, "title": "", "graph_scope": "private"})
    assert "Title: (untitled: named after its first message)" in untitled and "Scope: 🔒 private" in untitled


def test_chat_session_list_numbers_bold_titles_and_names_the_next_cursor():
    response = {
        "next": "https://x.example/api/v1/chat/sessions/?cursor=cD0yMDI1&graph_scope=world&limit=1",
        "previous": None,
        "results": [SESSION],
    }
    page = format_chat_sessions(response, scope="world", limit=LIMIT)
    lines = page.text.splitlines()
    assert lines[0] == "💬 Chat Sessions (🌐 world)"
    assert "1. **Machine Learning Discussion**" in lines
    assert "   Session ID: `61124873-a318-47be-9ffe-3d6e220df3d1`" in lines
    assert "   Model: snap" in lines and "   Engine: graph" in lines and "   Updated: 2025-11-06" in lines
    assert 'More sessions exist: call list_chat_sessions with cursor="cD0yMDI1".' in page.text
    empty = format_chat_sessions({"next": None, "results": []}, scope=None, limit=LIMIT).text
    assert empty.startswith("💬 Chat Sessions (all scopes)") and "No chat sessions yet." in empty
    assert cursor_of(None) is None and cursor_of("https://x/?limit=2") is None


def test_chat_reply_has_the_answer_sources_and_usage_line():
    reply = {
        "session_id": SESSION["id"],
        "message_id": "m-1",
        "title": "IBM",
        "answer": "IBM, originally founded as CTR, focuses on artificial intelligence [1].",
        "model": "snap",
        "reasoning_engine": "graph",
        "graph_scope": "world",
        "graph_id": None,
        "evidence": [
            {"n": 1, "kind": "passage", "origin": "world", "text": "…", "graph_id": "world", "document_id": "d-1",
             "source": "ibm_history.pdf", "url": None, "page": 3, "chunk_id": "c-1"},
            {"n": 2, "kind": "web", "origin": "web", "text": "…", "graph_id": "", "document_id": None,
             "source": "IBM - Wikipedia", "url": "https://en.wikipedia.org/wiki/IBM", "page": None, "chunk_id": None},
        ],
        "grounded": True,
        "support_score": 0.9,
        "citations": {"grounded": True, "support_score": 0.9, "cited": [1], "invalid": [], "uncited": [],
                      "unsupported": []},
        "usage": {"credits": 3},
        "credits_charged": 3,
        "balance": 1005,
    }  # fmt: skip
    text = format_chat_reply(reply, limit=LIMIT)
    lines = text.splitlines()
    assert lines[:3] == ["💬 Chat Response", "", reply["answer"]]
    assert "[1] 🌐 ibm_history.pdf, p. 3 (document `d-1`)" in lines
    assert "[2] 🔗 IBM - Wikipedia — https://en.wikipedia.org/wiki/IBM" in lines
    assert lines[-1] == "Usage: 3 credits | Balance: 1005 credits"
    assert "Not fully grounded" not in text
    ungrounded = format_chat_reply(
        {**reply, "grounded": False, "support_score": 0.2, "citations": {"unsupported": [{"sentence": "x"}]}},
        limit=LIMIT,
    )
    assert "⚠️ Not fully grounded (support 0.20): 1 statement(s) lack a supporting source." in ungrounded


def test_a_chat_reply_longer_than_the_cap_is_cut_and_says_so():
    text = format_chat_reply({"answer": "word " * 5000, "credits_charged": 3, "balance": 1}, limit=2_000)
    assert len(text) <= 2_000
    assert "… cut: this result is capped at 2,000 characters" in text and "structured result" in text


def test_research_created_text_follows_the_contract():
    lines = format_research_created({**RESEARCH, "balance": 970}).splitlines()
    assert lines[:2] == ["🔬 Research Session Created", ""]
    assert "Topic: transformer architectures" in lines
    assert "Session ID: `550e8400-e29b-41d4-a716-446655440000`" in lines and "Status: pending" in lines
    assert "The research agent will begin investigating this topic." in lines
    assert "Use get_research_status to check progress." in lines
    assert lines[-1] == "Usage: 30 credits held (what is not spent is returned) | Balance: 970 credits"


def test_research_status_in_progress_says_the_step_and_when_to_check_again():
    running = {**RESEARCH, "status": "running", "progress": {"step": "reading sources", "percent": 40,
               "sources_found": 12, "sources_read": 5}, "credits_spent": 9}  # fmt: skip
    text = format_research_status(running, limit=LIMIT).text
    lines = text.splitlines()
    assert lines[:2] == ["📋 Research Session Status", ""]
    assert "Topic: transformer architectures" in lines and "Status: running" in lines
    assert "Created: 2025-10-26 14:30" in lines and not any(line.startswith("Completed:") for line in lines)
    assert "🔄 In progress: reading sources (40%), 12 sources found, 5 read." in lines
    assert "Credits: 9 spent of 30 held" in lines


def test_research_status_completed_shows_the_report_with_numbered_sources():
    done = {**RESEARCH, "status": "completed", "completed": "2025-10-26T14:45:00+00:00", "report": REPORT,
            "papers": 15, "articles": 8, "credits_spent": 27}  # fmt: skip
    page = format_research_status(done, limit=LIMIT)
    lines = page.text.splitlines()
    assert "Completed: 2025-10-26 14:45" in lines and "✅ Research Complete!" in lines
    assert "Found 15 academic papers and 8 technical articles on transformer architectures." in lines
    assert "Transformers replace recurrence with attention." in lines
    assert "1. Self-attention scales quadratically with length. [1][2]" in lines
    assert "- How far do linear-attention variants close the gap?" in lines
    assert (
        "[1] 📄 Attention Is All You Need (paper, 2017-06-12) — https://arxiv.org/abs/1706.03762 — "
        "Document ID: `doc-1`" in lines
    )
    assert "[2] 📰 Longformer (article) — https://example.org/longformer" in lines
    assert page.text.endswith("API Cost: Free (status check)")


def test_research_status_failed_says_why_and_that_credits_came_back():
    failed = {**RESEARCH, "status": "failed", "error": "Every source search failed (arXiv timed out)."}
    text = format_research_status(failed, limit=LIMIT).text
    assert "❌ Research failed: Every source search failed (arXiv timed out)." in text
    assert "Unspent credits were returned." in text
    noted = format_research_status({**RESEARCH, "status": "completed", "note": "The budget ran out."}, limit=LIMIT)
    assert "Note: The budget ran out." in noted.text


def test_research_status_with_many_sources_is_cut_at_the_cap():
    sources = [{**REPORT["sources"][0], "number": n, "title": f"Paper {n} " + "x" * 200} for n in range(1, 301)]
    done = {**RESEARCH, "status": "completed", "report": {**REPORT, "sources": sources}}
    page = format_research_status(done, limit=5_000)
    assert len(page.text) <= 5_000 and page.cut
    assert f"… {300 - page.shown} more item(s) not shown: this result is capped at 5,000 characters." in page.text


def test_research_session_list_uses_status_marks_bold_topics_and_the_cursor():
    response = {
        "results": [
            {**RESEARCH, "id": "9ad092af", "topic": "test research topic", "created": "2025-11-06T09:00:00Z"},
            {**RESEARCH, "topic": "quantum computing", "status": "completed", "created": "2025-11-05T09:00:00Z"},
        ],
        "next": "http://testserver/api/v1/research/?cursor=abc%3D&limit=2",
    }
    text = format_research_sessions(response, scope="world", limit=LIMIT).text
    lines = text.splitlines()
    assert lines[0] == "📊 Research Sessions (🌐 world)"
    assert "1. ⏸️ **test research topic**" in lines and "   Session ID: `9ad092af`" in lines
    assert "   Status: pending" in lines and "   Created: 2025-11-06" in lines
    assert "2. ✅ **quantum computing**" in lines
    assert 'call list_research_sessions with cursor="abc="' in text


def test_a_read_only_key_refusal_reads_as_the_keys_permission():
    text = format_error(
        status=403,
        code="key_read_only",
        message="This API key (exo_***…) is read-only: it may search, explore and list, not POST /api/v1/documents/.",
        hint="Use an API key with full permission.",
    )
    assert text.startswith("Not allowed: This API key (exo_***…) is read-only")
    assert text.endswith("(HTTP 403, key_read_only)")


def test_research_status_does_not_repeat_a_summary_that_already_counts_the_sources():
    summary = "Found 2 academic papers and 1 technical article on transformers. Attention dominates."
    done = {**RESEARCH, "status": "completed", "report": {**REPORT, "summary": summary}, "papers": 2, "articles": 1}
    text = format_research_status(done, limit=LIMIT).text
    assert text.count("Found 2 academic papers") == 1 and summary in text


def _chain_reply(**overrides):  # type: ignore[no-untyped-def]
    cited = [
        {
            "n": 1,
            "kind": "passage",
            "origin": "private",
            "text": "Acme Corp completed its acquisition of Pico Systems in 2024.",
            "document_id": "d-1",
            "source": "acme.txt",
            "page": 1,
            "cited": True,
        },
        {
            "n": 2,
            "kind": "passage",
            "origin": "private",
            "text": "The BL-9 sensor is manufactured by Pico Systems in Leeds.",
            "document_id": "d-2",
            "source": "bl9.txt",
            "page": 1,
            "cited": True,
        },
    ]
    uncited = [{"n": 3, "kind": "fact", "origin": "private", "text": "Pico Systems located in Leeds", "cited": False}]
    reply = {
        "session_id": SESSION["id"], "answer": "Acme Corp [1, 2]. Acme Corp completed its acquisition of Pico "
        "Systems in 2024 [1]. The BL-9 sensor is manufactured by Pico Systems in Leeds [2].",
        "short_answer": "Acme Corp", "answered": True, "model": "snap", "reasoning_engine": "graph",
        "graph_scope": "private", "evidence": cited, "considered": [*cited, *uncited], "grounded": True,
        "support_score": 1.0, "citations": {"cited": [1, 2], "unsupported": []},
        "usage": {"credits": 3, "credits_refunded": 0}, "credits_charged": 3, "balance": 97,
    }  # fmt: skip
    return {**reply, **overrides}


def test_chat_reply_shows_the_short_answer_what_each_cited_source_says_grounding_and_the_uncited_briefly():
    reply = _chain_reply()
    lines = format_chat_reply(reply, limit=LIMIT).splitlines()
    assert lines[:3] == ["💬 Chat Response", "", reply["answer"]]  # the contract's head is unchanged
    assert "Short answer: Acme Corp" in lines
    at = lines.index("[1] 🔒 acme.txt, p. 1 (document `d-1`)")
    assert lines[at + 1] == "    passage: “Acme Corp completed its acquisition of Pico Systems in 2024.”"
    assert "✅ Grounded in the cited sources (support 1.00)." in lines
    assert lines[lines.index("Also considered (not cited):") + 1 :][:1] == ["  [3] fact: Pico Systems located in Leeds"]
    assert not any(line.startswith("  [1]") for line in lines)  # cited items are not listed again
    assert lines[-1] == "Usage: 3 credits | Balance: 97 credits"


def test_chat_reply_the_documents_do_not_answer_says_so_not_grounded_and_refunded():
    reply = _chain_reply(
        answer="Your documents don't say who won the 2018 World Cup. The closest passages are about Acme Corp [1].",
        short_answer="", answered=False, grounded=False, support_score=0.0, evidence=_chain_reply()["evidence"][:1],
        usage={"credits": 0, "credits_refunded": 3}, credits_charged=0, balance=100,
    )  # fmt: skip
    text = format_chat_reply(reply, limit=LIMIT)
    assert "📭 Not in your documents: the evidence does not answer this question (not grounded); not charged " \
        "(3 credits refunded)." in text  # fmt: skip
    assert "Short answer:" not in text and "✅ Grounded" not in text and "Not fully grounded" not in text
    assert text.splitlines()[-1] == "Usage: 0 credits | Balance: 100 credits"


def test_research_findings_are_shown_under_their_sub_questions():
    grouped = {
        **REPORT,
        "findings": [
            {"text": "Self-attention scales quadratically with length.", "citations": [1], "sub_question": "cost"},
            {"text": "Sparse attention reduces the cost.", "citations": [2], "sub_question": "cost"},
            {"text": "Longformer reads 4,096 tokens.", "citations": [2], "sub_question": "long documents"},
        ],
    }
    done = {**RESEARCH, "status": "completed", "completed": "2025-10-26T14:45:00+00:00", "report": grouped}
    lines = format_research_status(done, limit=LIMIT).text.splitlines()
    at = lines.index("Key findings:")
    assert lines[at + 1 : at + 6] == [
        "» cost",
        "1. Self-attention scales quadratically with length. [1]",
        "2. Sparse attention reduces the cost. [2]",
        "» long documents",
        "3. Longformer reads 4,096 tokens. [2]",
    ]
