"""What every tool text shares: scope marks, dates, clipping, the output cap (`bounded`), paging notes, errors."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

WORLD_MARK = "🌐"
PRIVATE_MARK = "🔒"
CONTEXT_CHARS = 300


def scope_mark(scope: str | None) -> str:
    return WORLD_MARK if scope == "world" else PRIVATE_MARK


def _date(value: Any) -> str:
    text = str(value or "")
    return text[:10] if len(text) >= 10 else text or "unknown"


def _clip(text: Any, limit: int = CONTEXT_CHARS) -> str:
    value = " ".join(str(text or "").split())
    return value if len(value) <= limit else value[: limit - 1].rstrip() + "…"


@dataclass(frozen=True)
class Bounded:
    """A formatted result: the text and how many items it shows (the rest were cut to fit the cap)."""

    text: str
    shown: int
    total: int

    @property
    def cut(self) -> bool:
        return self.shown < self.total


def bounded(header: str, items: Sequence[str], *, footer: str = "", limit: int, more: str) -> Bounded:
    """header + as many items as fit in `limit` characters + footer; a cut result names what was left out and `more`."""
    parts = [header]
    size = len(header) + len(footer) + 2
    shown = 0
    for item in items:
        room = limit - size - 400  # leave room for the "left out" note
        if len(item) + 2 > room and shown > 0:
            break
        if len(item) + 2 > room:  # a single item larger than the cap: cut the item itself
            item = item[: max(0, room - 1)] + "…"
        parts.append(item)
        size += len(item) + 2
        shown += 1
    if shown < len(items):
        parts.append(
            f"… {len(items) - shown} more item(s) not shown: this result is capped at {limit:,} characters. {more}"
        )
    if footer:
        parts.append(footer)
    return Bounded(text="\n\n".join(parts), shown=shown, total=len(items))


def _paging_note(response: Mapping[str, Any], shown: int, noun: str, tool: str) -> str:
    count = response.get("count")
    if isinstance(count, int) and count > shown:
        return f"Showing {shown} of {count} {noun}. Call {tool} with offset={shown} for the next page."
    return ""


def _with_paging(result: Bounded, response: Mapping[str, Any], offset: int, noun: str, tool: str) -> Bounded:
    note = _paging_note(response, offset + result.shown, noun, tool)
    if not note or result.cut:
        return result
    text, sep, footer = result.text.rpartition("\n\nAPI Cost:")
    return Bounded(text=f"{text}\n\n{note}{sep}{footer}", shown=result.shown, total=result.total)


def _when(value: Any) -> str:
    """An ISO timestamp as 'YYYY-MM-DD HH:MM' (UTC, as the API gives it)."""
    text = str(value or "")
    return f"{text[:10]} {text[11:16]}" if len(text) >= 16 and text[10] in "T " else text or "unknown"


def cursor_of(url: Any) -> str | None:
    """The `cursor` query parameter of a REST next/previous link (what the list tools take back)."""
    if not url:
        return None
    from urllib.parse import parse_qs, urlsplit

    values = parse_qs(urlsplit(str(url)).query).get("cursor")
    return values[0] if values else None


def _scope_label(scope: str | None) -> str:
    return f"{scope_mark(scope)} {scope}" if scope else "all scopes"


def _cap_text(text: str, limit: int, more: str) -> str:
    """A single text block cut to `limit` characters, saying so (for the rare answer longer than the cap)."""
    if len(text) <= limit:
        return text
    note = f"\n\n… cut: this result is capped at {limit:,} characters ({len(text) - limit + 200:,} left out). {more}"
    return text[: max(0, limit - len(note))].rstrip() + note


def cursor_footer(response: Mapping[str, Any], noun: str, tool: str) -> str:
    """The list footer: the cost, after the call that gets the next page when the REST page has one."""
    cursor = cursor_of(response.get("next"))
    footer = "API Cost: Free"
    if cursor:
        footer = f'More {noun} exist: call {tool} with cursor="{cursor}".\n\n{footer}'
    return footer


ERROR_LABELS = {
    400: "Invalid request",
    401: "Authentication failed",
    402: "Insufficient credits",
    403: "Not allowed",
    404: "Not found",
    409: "Conflict",
    413: "Too large",
    415: "Unsupported file",
    422: "Invalid request",
    429: "Rate limit reached",
    503: "Service unavailable",
}


def format_error(*, status: int, code: str, message: str, hint: str = "", retry_after: int | None = None) -> str:
    """The text of a tool error: a label for the kind (once), the REST message, when to retry, the hint."""
    if status == 0:
        label = {"timeout": "Timeout", "connection_error": "Connection failed"}.get(code, "Request failed")
    else:
        label = ERROR_LABELS.get(status, "Server error" if status >= 500 else "Request failed")
    # The label names the kind unless the message already opens with it ("Rate limit reached: 2 requests…").
    text = message if message.casefold().startswith(label.casefold()) else f"{label}: {message}"
    if status == 429 and retry_after is not None:
        text += f" Retry after {retry_after} s."
    if hint:
        text += f" {hint}"
    return f"{text} (HTTP {status}, {code})" if status else f"{text} ({code})"
