"""Request body parsers: JSON with a nesting-depth limit, so hostile bodies answer 400 instead of 500; every parser
(JSON, multipart, form) refuses text no database or encoder takes (lone UTF-16 surrogates, NUL) with a 400 naming
the field."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.http import QueryDict
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


# A lone UTF-16 surrogate (JSON's "\\ud800" with no partner) cannot be encoded as UTF-8 (so never rendered or
# stored), and PostgreSQL refuses NUL in text: both are refused at the edge, before any view sees them.
UNTEXT = re.compile("[\x00\ud800-\udfff]")


def _untext_name(char: str) -> str:
    return "a NUL character (U+0000)" if char == "\x00" else f"a lone UTF-16 surrogate (U+{ord(char):04X})"


def untext_error(field: str, char: str) -> ValidationError:
    """The 400 for a field holding a character no text may hold; names the field, never echoes the value."""
    return ValidationError(
        f"{field} contains {_untext_name(char)}, which is not text.",
        code="invalid_text",
        hint="Send text as valid UTF-8 (no NUL characters; a \\ud800-\\udfff escape only as half of a pair).",
        extra={"field": field},
    )


def untext_find(value: Any, path: str = "") -> tuple[str, str] | None:
    """(field path, bad character) of the first string (or key) in value holding a lone surrogate or NUL, else None.
    Paths read like `graph_scope`, `items[2].name`; the body itself is `body`. No side effects."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            found = UNTEXT.search(item)
            if found:
                return where or "body", found.group()
        elif isinstance(item, Mapping):
            for key, child in item.items():
                name = f"{where}.{key}" if where else str(key)
                found = UNTEXT.search(str(key))
                if found:
                    return (where or "body") + " (a key)", found.group()
                stack.append((child, name))
        elif isinstance(item, list):
            stack.extend((child, f"{where}[{index}]") for index, child in enumerate(item))
    return None


def untext_check(value: Any) -> None:
    """Raise the 400 (ValidationError) if any string or key in value holds a lone surrogate or NUL."""
    found = untext_find(value)
    if found:
        raise untext_error(*found)


def untext_check_querydict(data: Any) -> None:
    """untext_check for a QueryDict (form fields, query parameters): every value of every key."""
    for key in data:
        for value in data.getlist(key) if hasattr(data, "getlist") else [data[key]]:
            untext_check({key: value})


class FormBody(QueryDict):
    """A form or multipart request body's fields: a QueryDict like a URL's query string, but a body, so
    exograph.core.api.validated is strict with it (an unknown field is a 400) as with a JSON body."""


def form_body(data: QueryDict) -> FormBody:
    """data's fields as an (immutable) FormBody."""
    body = FormBody(mutable=True, encoding=data.encoding)
    for key, values in data.lists():
        body.setlist(key, values)
    body._mutable = False
    return body


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser plus a depth limit (too deep is a 400 naming the limit, never a RecursionError) and the
    text rule (a lone surrogate or NUL in any string is a 400 naming the field, never a 500 in the renderer)."""

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
        untext_check(value)
        return value


class MultiPartParser(parsers.MultiPartParser):
    """DRF's multipart parser plus the text rule on its form fields (a NUL is a 400 naming the field)."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None) -> Any:
        parsed = super().parse(stream, media_type, parser_context)
        untext_check_querydict(parsed.data)
        return parsers.DataAndFiles(form_body(parsed.data), parsed.files)


class FormParser(parsers.FormParser):
    """DRF's urlencoded-form parser plus the text rule (a NUL is a 400 naming the field)."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None) -> Any:
        data = super().parse(stream, media_type, parser_context)
        untext_check_querydict(data)
        return form_body(data)
