"""Graph scope: world (shared by everyone) or private (the caller's own)."""

from __future__ import annotations

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
