"""Text of every tool result, formatted like the contract's examples. Pure functions, no I/O.

Each formatter takes the REST response (and what the tool knows: scope, query) and returns text.
`bounded` keeps a result under the output cap, cutting at item boundaries and saying what was left out.
"""

from mcp_bridge.formatting.base import (
    CONTEXT_CHARS,
    ERROR_LABELS,
    PRIVATE_MARK,
    WORLD_MARK,
    Bounded,
    bounded,
    cursor_of,
    format_error,
    scope_mark,
)
from mcp_bridge.formatting.chat import (
    CONSIDERED_SHOWN,
    ORIGIN_MARKS,
    format_chat_reply,
    format_chat_session_created,
    format_chat_sessions,
)
from mcp_bridge.formatting.graphs import (
    format_documents,
    format_graphs,
    format_search,
    format_upload,
    format_world_graph,
)
from mcp_bridge.formatting.research import (
    STATUS_MARKS,
    format_research_created,
    format_research_sessions,
    format_research_status,
)

__all__ = [
    "CONSIDERED_SHOWN",
    "CONTEXT_CHARS",
    "ERROR_LABELS",
    "ORIGIN_MARKS",
    "PRIVATE_MARK",
    "STATUS_MARKS",
    "WORLD_MARK",
    "Bounded",
    "bounded",
    "cursor_of",
    "format_chat_reply",
    "format_chat_session_created",
    "format_chat_sessions",
    "format_documents",
    "format_error",
    "format_graphs",
    "format_research_created",
    "format_research_sessions",
    "format_research_status",
    "format_search",
    "format_upload",
    "format_world_graph",
    "scope_mark",
]
