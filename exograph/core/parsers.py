"""Request body parsers: JSON with a nesting-depth limit, so hostile bodies answer 400 instead of 500."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from rest_framework import parsers

from exograph.core.errors import ValidationError


class JsonTooDeep(ValueError):
    """A JSON document nests arrays/objects deeper than JSON_MAX_DEPTH."""


def _too_deep_message(limit: int) -> str:
    return f"The JSON body nests objects or arrays deeper than {limit} levels; send a flatter document."


def json_depth_check(value: Any, *, limit: int) -> None:
    """Raise JsonTooDeep if value (parsed JSON) nests containers deeper than limit. No side effects."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            raise JsonTooDeep(_too_deep_message(limit))
        stack.extend((child, depth + 1) for child in children if isinstance(child, (Mapping, list)))


def json_loads_bounded(data: str | bytes, *, limit: int | None = None, **kwargs: Any) -> Any:
    """json.loads that refuses documents nested deeper than limit (default JSON_MAX_DEPTH). Raises JsonTooDeep/ValueError."""
    limit = limit or settings.JSON_MAX_DEPTH
    try:
        value = json.loads(data, **kwargs)
    except RecursionError:
        # The C scanner recurses once per level and gives up near the interpreter's recursion limit.
        raise JsonTooDeep(_too_deep_message(limit)) from None
    json_depth_check(value, limit=limit)
    return value


def _too_deep_error(limit: int) -> ValidationError:
    return ValidationError(
        _too_deep_message(limit),
        code="json_too_deep",
        hint=f"Nest objects and arrays at most {limit} levels deep (EXOGRAPH_JSON_MAX_DEPTH).",
    )


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser plus a depth limit: too deep is a 400 naming the limit, never a RecursionError (500)."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None) -> Any:
        limit = settings.JSON_MAX_DEPTH
        try:
            value = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise _too_deep_error(limit) from None
        try:
            json_depth_check(value, limit=limit)
        except JsonTooDeep:
            raise _too_deep_error(limit) from None
        return value
