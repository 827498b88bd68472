"""Research use cases (a package): sessions (quote, create, start; their checks in validation, a session's end in
closing, watch topics' runs in watch), the pipeline's steps (pipeline) and its run under the session's lease
(running), planner and synthesiser (writing), and the report's export."""

from __future__ import annotations

from research.services.closing import (
    research_session_cancel,
    research_session_complete,
    research_session_fail,
    research_watch_stop,
)
from research.services.export import research_export_docx, research_export_filename, research_export_markdown
from research.services.pipeline import DONE, STOPPED, WAIT
from research.services.running import research_session_run
from research.services.sessions import (
    RUN_TASK,
    research_session_create,
    research_session_quote,
    research_session_requeue,
    research_session_start,
)
from research.services.validation import ResearchAsk, research_price
from research.services.watch import research_session_watch_run, research_watch_due

__all__ = [
    "DONE",
    "RUN_TASK",
    "ResearchAsk",
    "STOPPED",
    "WAIT",
    "research_export_docx",
    "research_export_filename",
    "research_export_markdown",
    "research_price",
    "research_session_cancel",
    "research_session_complete",
    "research_session_create",
    "research_session_fail",
    "research_session_quote",
    "research_session_requeue",
    "research_session_run",
    "research_session_start",
    "research_session_watch_run",
    "research_watch_due",
    "research_watch_stop",
]
