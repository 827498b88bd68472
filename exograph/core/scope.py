"""Graph scope: world (shared by everyone) or private (the caller's own)."""

from __future__ import annotations

from typing import Any

from django.db import models


class Scope(models.TextChoices):
    WORLD = "world", "World"
    PRIVATE = "private", "Private"


SCOPE_HEADER = "X-Graph-Scope"
ALLOWED_SCOPES_TEXT = "'world' or 'private'"


def parse_scope(value: str | None, *, default: Scope = Scope.PRIVATE, source: str = "graph_scope") -> Scope:
    """Parse a scope value; None or empty gives the default. Raises ValidationError naming the allowed values."""
    from exograph.core.errors import ValidationError

    if value is None or value.strip() == "":
        return default
    normalized = value.strip().lower()
    if normalized not in Scope.values:
        raise ValidationError(
            f"{source} must be {ALLOWED_SCOPES_TEXT}; got {value[:40]!r}.",
            code="invalid_scope",
            hint=f"Send {source} as 'world' (shared world graphs) or 'private' (only your own graphs).",
        )
    return Scope(normalized)


def scope_resolve(request: Any, argument: str | None = None) -> Scope:
    """The scope of a call, one rule for every door (documents, graphs, chat sessions, research; lists and writes):
    the `graph_scope` argument (query string or body) when given, else the X-Graph-Scope header when sent, else
    private. A list shows only that scope's items (list the other scope by asking for it); a write creates in it.
    Two refinements keep an existing object's scope: a write into a given graph_id takes that graph's scope when
    no argument is sent (research), and a chat message continues its session's scope. Raises ValidationError (400)
    on a value other than world/private."""
    if argument is not None and str(argument).strip():
        return parse_scope(str(argument))
    return parse_scope(request.headers.get(SCOPE_HEADER), source=SCOPE_HEADER)
