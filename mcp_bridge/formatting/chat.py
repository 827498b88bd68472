"""Texts of the chat tools: create_chat_session, list_chat_sessions, send_chat_message."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_bridge.formatting.base import (
    PRIVATE_MARK,
    WORLD_MARK,
    Bounded,
    _cap_text,
    _clip,
    _date,
    _scope_label,
    bounded,
    cursor_footer,
    scope_mark,
)


def _chat_session_lines(session: Mapping[str, Any]) -> list[str]:
    lines = [
        f"Session ID: `{session.get('id', '')}`",
        f"Scope: {scope_mark(session.get('graph_scope'))} {session.get('graph_scope', '')}",
        f"Model: {session.get('model_name', '')}",
        f"Engine: {session.get('reasoning_engine', '')}",
    ]
    if session.get("graph_id"):
        lines.append(f"Graph ID: `{session['graph_id']}`")
    return lines


def format_chat_session_created(session: Mapping[str, Any]) -> str:
    """create_chat_session: '💬 Chat Session Created', title, session id, scope, model, engine."""
    title = session.get("title") or "(untitled: named after its first message)"
    lines = ["💬 Chat Session Created", "", f"Title: {title}", *_chat_session_lines(session), ""]
    lines.append(f'Send messages with send_chat_message(session_id="{session.get("id", "")}", message=…).')
    lines += ["", "API Cost: Free (session creation)"]
    return "\n".join(lines)


def format_chat_sessions(response: Mapping[str, Any], *, scope: str | None, limit: int) -> Bounded:
    """list_chat_sessions: '💬 Chat Sessions (🌐 world)', numbered bold titles with id, model, engine, updated."""
    sessions = list(response.get("results") or [])
    header = f"💬 Chat Sessions ({_scope_label(scope)})"
    if not sessions:
        header += "\n\nNo chat sessions yet. Start one with create_chat_session or send_chat_message."
    items = []
    for number, session in enumerate(sessions, start=1):
        lines = [
            f"{number}. **{session.get('title') or '(untitled)'}**",
            f"   Session ID: `{session.get('id', '')}`",
            f"   Scope: {scope_mark(session.get('graph_scope'))} {session.get('graph_scope', '')}",
            f"   Model: {session.get('model_name', '')}",
            f"   Engine: {session.get('reasoning_engine', '')}",
            f"   Updated: {_date(session.get('updated'))}",
        ]
        items.append("\n".join(lines))
    footer = cursor_footer(response, "sessions", "list_chat_sessions")
    more = "Ask for fewer sessions (limit), then page on with cursor."
    return bounded(header, items, footer=footer, limit=limit, more=more)


ORIGIN_MARKS = {"world": WORLD_MARK, "private": PRIVATE_MARK, "web": "🔗"}


def _evidence_line(item: Mapping[str, Any]) -> str:
    mark = ORIGIN_MARKS.get(str(item.get("origin") or ""), "•")
    where = str(item.get("source") or item.get("kind") or "source")
    if item.get("page"):
        where += f", p. {item['page']}"
    if item.get("url"):
        where += f" — {item['url']}"
    if item.get("document_id"):
        where += f" (document `{item['document_id']}`)"
    return f"[{item.get('n', '?')}] {mark} {where}"


CONSIDERED_SHOWN = 8


def format_chat_reply(response: Mapping[str, Any], *, limit: int) -> str:
    """send_chat_message: '💬 Chat Response', the answer, its short answer, its cited sources (each with what it
    says), whether it is grounded (or not in the documents, and refunded), the evidence considered but not cited
    (briefly), the session, 'Usage: … | Balance: …'."""
    answer = str(response.get("answer") or "").strip() or "(the model gave no answer)"
    lines = ["💬 Chat Response", "", answer]
    short = str(response.get("short_answer") or "").strip()
    if short and response.get("answered") is not False:
        lines += ["", f"Short answer: {short}"]
    evidence = [item for item in response.get("evidence") or [] if isinstance(item, Mapping)]
    if evidence:
        lines += ["", "Sources:"]
        for item in evidence:
            lines.append(_evidence_line(item))
            said = _clip(item.get("text"), 200)
            if said and said != "…":
                lines.append(f"    {item.get('kind') or 'passage'}: “{said}”")
    citations = response.get("citations") or {}
    unsupported = citations.get("unsupported") if isinstance(citations, Mapping) else None
    usage = response.get("usage") if isinstance(response.get("usage"), Mapping) else {}
    if response.get("answered") is False:
        refunded = int(usage.get("credits_refunded") or 0) if usage else 0
        lines += [
            "",
            "📭 Not in your documents: the evidence does not answer this question (not grounded)"
            + (f"; not charged ({refunded} credits refunded)." if refunded else "."),
        ]
    elif response.get("grounded") is False:
        score = float(response.get("support_score") or 0)
        lines += [
            "",
            f"⚠️ Not fully grounded (support {score:.2f}): "
            + (f"{len(unsupported)} statement(s) lack a supporting source. " if unsupported else "")
            + "Treat uncited statements with care.",
        ]
    elif response.get("grounded") is True:
        lines += ["", f"✅ Grounded in the cited sources (support {float(response.get('support_score') or 0):.2f})."]
    considered = [
        item
        for item in response.get("considered") or []
        if isinstance(item, Mapping) and not item.get("cited") and _clip(item.get("text"), 80) not in ("", "…")
    ]
    if considered:
        shown = [
            f"[{item.get('n', '?')}] {item.get('kind') or 'passage'}: {_clip(item.get('text'), 80)}"
            for item in considered[:CONSIDERED_SHOWN]
        ]
        more = len(considered) - len(shown)
        lines += ["", "Also considered (not cited):", *(f"  {line}" for line in shown)]
        if more > 0:
            lines.append(f"  … and {more} more in the structured result (considered).")
    lines += [
        "",
        f"Session ID: `{response.get('session_id', '')}` | Model: {response.get('model', '')} | "
        f"Engine: {response.get('reasoning_engine', '')} | Scope: {scope_mark(response.get('graph_scope'))} "
        f"{response.get('graph_scope', '')}",
        f"Usage: {response.get('credits_charged', 0)} credits | Balance: {response.get('balance', '?')} credits",
    ]
    return _cap_text("\n".join(lines), limit, "The full answer and evidence are in the structured result of this call.")
