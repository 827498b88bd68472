"""The JSON shapes of research sessions, shared by REST, the web page and the events socket."""

from __future__ import annotations

from typing import Any, TypedDict

from research.models import ResearchSession


class ProgressOut(TypedDict):
    step: str
    percent: int
    sources_found: int
    sources_read: int


def _progress(session: ResearchSession) -> ProgressOut:
    return {
        "step": session.step,
        "percent": int(session.percent),
        "sources_found": int(session.sources_found),
        "sources_read": int(session.sources_read),
    }


def _counts(session: ResearchSession) -> tuple[int, int]:
    sources = (session.report or {}).get("sources") or []
    papers = sum(1 for s in sources if s.get("kind") == "paper")
    articles = sum(1 for s in sources if s.get("kind") == "article")
    return papers, articles


def research_session_summary_out(session: ResearchSession) -> dict[str, Any]:
    """A session without its report (lists)."""
    papers, articles = _counts(session)
    return {
        "id": str(session.id),
        "topic": session.topic,
        "status": session.status,
        "scope": session.scope,
        "graph_id": session.graph_id,
        "graph_name": session.graph_name,
        "model": session.model,
        "created": session.created.isoformat(),
        "completed": session.completed_at.isoformat() if session.completed_at else None,
        "progress": _progress(session),
        "credits_held": session.credits_held,
        "credits_spent": int(session.credits_spent),
        "note": session.note,
        "error": session.error,
        "papers": papers,
        "articles": articles,
        "watch": session.watch or None,
        "watch_of": str(session.watch_of_id) if session.watch_of_id else None,
    }


def research_session_out(session: ResearchSession) -> dict[str, Any]:
    """A session with its report (null until completed)."""
    return {**research_session_summary_out(session), "report": session.report or None}


def research_session_created_out(session: ResearchSession) -> dict[str, Any]:
    """What create answers (202), with the use case's Spent added by the door (credits_charged, credits_held, balance)."""
    return {
        "id": str(session.id),
        "topic": session.topic,
        "status": session.status,
        "scope": session.scope,
        "graph_id": session.graph_id,
        "graph_name": session.graph_name,
        "model": session.model,
        "credits_held": session.credits_held,
        "credits_spent": int(session.credits_spent),
        "created": session.created.isoformat(),
        "watch": session.watch or None,
    }


def research_progress_event(session: ResearchSession) -> dict[str, Any]:
    """The events-socket payload: ids, status and counters only (never the topic or report text)."""
    return {
        "id": str(session.id),
        "status": session.status,
        "progress": _progress(session),
        "credits_spent": int(session.credits_spent),
        "credits_held": session.credits_held,
        "note": session.note,
        "error": session.error,
    }
