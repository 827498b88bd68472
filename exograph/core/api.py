"""REST plumbing shared by every app: the one exception handler, pagination, input validation."""

from __future__ import annotations

import difflib
import logging
from typing import TYPE_CHECKING, Any

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404, HttpRequest, JsonResponse, QueryDict
from rest_framework import exceptions as drf_exceptions
from rest_framework import serializers
from rest_framework.pagination import CursorPagination, LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response

from exograph.core.errors import ExoGraphError, ServiceUnavailable
from exograph.core.parsers import UNTEXT, FormBody
from exograph.core.ratelimit import address_check_settle

if TYPE_CHECKING:  # the AUTH_USER_MODEL, resolved by django-stubs; core imports no app of ours
    from django.contrib.auth.models import _User as User

logger = logging.getLogger(__name__)

_DRF_HINTS: dict[type[Exception], tuple[str, str]] = {
    drf_exceptions.ParseError: (
        "malformed_request",
        "Send a valid JSON object with Content-Type: application/json.",
    ),
    drf_exceptions.NotAuthenticated: (
        "unauthenticated",
        "Send your API key as 'Authorization: Bearer exo_…' or 'X-API-Key: exo_…'. Create one on the API keys page.",
    ),
    drf_exceptions.AuthenticationFailed: (
        "unauthenticated",
        "Check that the key is complete and not revoked; create a new one on the API keys page.",
    ),
    drf_exceptions.PermissionDenied: ("forbidden", "This account may not do this."),
    drf_exceptions.NotFound: ("not_found", "Check the id; it may have been deleted or never existed."),
    drf_exceptions.MethodNotAllowed: ("method_not_allowed", "See /api/docs/ for the methods each endpoint allows."),
    drf_exceptions.NotAcceptable: ("not_acceptable", "Ask for application/json."),
    drf_exceptions.UnsupportedMediaType: (
        "unsupported_media_type",
        "Send application/json, or multipart/form-data for file uploads.",
    ),
    drf_exceptions.Throttled: ("rate_limited", "Wait for the time given in Retry-After."),
}


def error_body(code: str, message: str, hint: str = "", extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The one error envelope: {"error": {"code", "message", "hint", ...extra}}."""
    error: dict[str, Any] = {"code": code, "message": message, "hint": hint}
    if extra:
        error.update(extra)
    return {"error": error}


def renderable(value: Any) -> Any:
    """value with every NUL or lone surrogate in its strings and keys shown as an escape (\\ud800): an error that
    echoes bad input must still encode as UTF-8, never turn a 400 into a 500 in the renderer."""
    if isinstance(value, str):
        return UNTEXT.sub(lambda match: f"\\u{ord(match.group()):04x}", value)
    if isinstance(value, dict):
        return {renderable(key): renderable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [renderable(item) for item in value]
    return value


def _flatten(detail: Any, prefix: str = "") -> list[str]:
    if isinstance(detail, dict):
        out: list[str] = []
        for key, value in detail.items():
            name = key if key != "non_field_errors" else ""
            out.extend(_flatten(value, f"{prefix}{name}" if not prefix else f"{prefix}.{name}"))
        return out
    if isinstance(detail, list):
        out = []
        for item in detail:
            out.extend(_flatten(item, prefix))
        return out
    return [f"{prefix}: {detail}" if prefix else str(detail)]


# Retry-After (seconds) of the 503 a request gets while the database is unreachable.
DATABASE_RETRY_AFTER = 5


def database_outage(exc: BaseException | None) -> ServiceUnavailable | None:
    """The 503 to answer when exc means the SQL database is unreachable (down, restarting, pool exhausted)."""
    from django.db import InterfaceError, OperationalError

    if not isinstance(exc, (OperationalError, InterfaceError)):
        return None
    from psycopg_pool import PoolTimeout

    if isinstance(exc.__cause__, PoolTimeout):
        # The pool cannot tell a dead database from one whose connections are all in use: name both.
        logger.warning("database unavailable or busy: no pooled connection in time")
        return ServiceUnavailable(
            "No database connection could be had in time (the database is down, restarting or overloaded), so "
            "this request was not served; nothing was charged or changed.",
            code="database_unavailable",
            hint=f"This is on our side; retry in {DATABASE_RETRY_AFTER} s (Retry-After). Operators: check "
            "/readyz, or raise EXOGRAPH_DB_POOL_MAX_SIZE if the database is up.",
            extra={"unavailable": "database", "retry_after": DATABASE_RETRY_AFTER},
            headers={"Retry-After": str(DATABASE_RETRY_AFTER)},
        )
    logger.warning("database unavailable: %s", type(exc.__cause__ or exc).__name__)
    return ServiceUnavailable(
        "The database is unreachable, so this request was not served; nothing was charged or changed.",
        code="database_unavailable",
        hint=f"This is on our side (the database is down or restarting); retry in {DATABASE_RETRY_AFTER} s "
        "(Retry-After).",
        extra={"unavailable": "database", "retry_after": DATABASE_RETRY_AFTER},
        headers={"Retry-After": str(DATABASE_RETRY_AFTER)},
    )


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    """DRF's EXCEPTION_HANDLER: every error of every endpoint leaves through here."""
    headers: dict[str, str] = {}
    request = context.get("request")
    if request is not None:
        # An error before the throttle (a permission's 403) must not answer a right API key differently from a wrong
        # one while the address is over its failed-key limit: the check authentication deferred answers first.
        try:
            address_check_settle(request)
        except ExoGraphError as refused:
            exc = refused
    exc = database_outage(exc) or exc
    if isinstance(exc, ExoGraphError):
        headers.update(exc.headers)
        body = error_body(exc.code, exc.message, exc.hint, exc.extra)
        return Response(renderable(body), status=exc.status, headers=headers)
    if isinstance(exc, Http404):
        exc = drf_exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = drf_exceptions.PermissionDenied()
    if isinstance(exc, drf_exceptions.ValidationError):
        messages = _flatten(exc.detail)
        body = error_body(
            "invalid",
            "; ".join(messages) or "Invalid input.",
            "Fix the fields named in the message; see /api/docs/ for the expected shape.",
            {"fields": exc.detail},
        )
        return Response(renderable(body), status=400)
    if isinstance(exc, drf_exceptions.APIException):
        code, hint = _DRF_HINTS.get(type(exc), (str(exc.default_code), ""))
        wait = getattr(exc, "wait", None)
        if wait is not None:
            headers["Retry-After"] = str(int(wait))
        if getattr(exc, "auth_header", None):
            headers["WWW-Authenticate"] = exc.auth_header  # type: ignore[attr-defined]
        message = exc.detail if isinstance(exc.detail, str) else "; ".join(_flatten(exc.detail))
        return Response(renderable(error_body(code, str(message), hint)), status=exc.status_code, headers=headers)
    logger.exception("unhandled error in %s", context.get("view").__class__.__name__)
    return Response(
        error_body("internal_error", "Something went wrong on our side.", "Retry; if it persists, contact support."),
        status=500,
    )


class Pagination(LimitOffsetPagination):
    default_limit = 50
    max_limit = 200


class Cursor(CursorPagination):
    """Cursor pages (`limit`, `cursor`); a malformed cursor is a 400 naming the fix (DRF's default is a 404).
    Subclasses set page_size, max_page_size and ordering."""

    page_size_query_param = "limit"

    def decode_cursor(self, request: Request) -> Any:
        try:
            return super().decode_cursor(request)
        except drf_exceptions.NotFound as exc:
            from exograph.core.errors import ValidationError

            raise ValidationError(
                "The cursor is not one this list returned.",
                code="invalid_cursor",
                hint="Follow the next/previous links of a previous page, or omit cursor.",
            ) from exc


def actor_of(request: Request) -> User:
    """The authenticated account of an API request (views require authentication)."""
    user = request.user
    if not isinstance(user, get_user_model()):
        raise drf_exceptions.NotAuthenticated()
    return user


def validated(
    serializer_class: type[serializers.Serializer],
    data: Any,
    *,
    strict: bool | None = None,
    also: tuple[str, ...] = (),
    **kwargs: Any,
) -> dict[str, Any]:
    """Validate input with a serializer; shape errors become the 400 envelope.

    A request body (JSON, form or multipart) is strict: a field the serializer does not take, nor `also` (read
    elsewhere, e.g. dry_run by the Meter), is a 400 unknown_field naming the nearest field, never silently dropped
    to run (and charge) with its default ({"scop": "private"} would make a graph of the default scope). A URL's
    query string is not: the paginator reads its limit, offset and cursor. strict=False opts a body out (say why
    where you do); strict=True holds a query string to the serializer's fields."""
    serializer = serializer_class(data=data, **kwargs)
    if strict is None:
        strict = not _is_query_string(data)
    if strict and hasattr(data, "keys"):
        known = [*serializer.fields, *also]
        unknown = sorted(str(name) for name in data.keys() if name not in known)
        if unknown:
            raise _unknown_field(unknown, known)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


def _is_query_string(data: Any) -> bool:
    """Whether data is a URL's query string (request.query_params): a QueryDict, where our parsers give a form or
    multipart body as a FormBody."""
    return isinstance(data, QueryDict) and not isinstance(data, FormBody)


def _unknown_field(unknown: list[str], known: list[str]) -> ExoGraphError:
    from exograph.core.errors import ValidationError

    name = unknown[0][:60]
    near = [field for field in known if name.lower() in field or field in name.lower()]
    near = near or difflib.get_close_matches(name.lower(), known, n=1, cutoff=0.5)
    named = ", ".join(repr(field[:60]) for field in unknown[:5])
    return ValidationError(
        f"Unknown field{'s' if len(unknown) > 1 else ''} {named}; this endpoint takes: {', '.join(known)}.",
        code="unknown_field",
        hint=(f"Did you mean '{near[0]}'? " if near else "") + "Rename or remove it; see /api/docs/ for the fields.",
    )


def api_not_found(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    return JsonResponse(
        error_body("not_found", f"No endpoint at {request.path}.", "See /api/docs/ for the endpoints."),
        status=404,
    )


def api_server_error(request: HttpRequest) -> JsonResponse:
    return JsonResponse(
        error_body("internal_error", "Something went wrong on our side.", "Retry; if it persists, contact support."),
        status=500,
    )


class ScopeField(serializers.ChoiceField):
    """graph_scope in a query or body: overrides the X-Graph-Scope header for this request."""

    default_error_messages = {"invalid_choice": "must be 'world' or 'private'; got \"{input}\"."}

    def __init__(self, **kwargs: Any) -> None:
        from exograph.core.scope import Scope

        kwargs.setdefault("required", False)
        kwargs.setdefault("help_text", "world or private; defaults to the X-Graph-Scope header, else private.")
        super().__init__(choices=Scope.choices, **kwargs)

    def to_internal_value(self, data: Any) -> Any:
        from exograph.core.scope import parse_scope

        if isinstance(data, str):
            data = data.strip().lower()
            if data:  # any value but world/private is the header's 400 invalid_scope (README), not a field error
                parse_scope(data, source=self.field_name or "graph_scope")
        return super().to_internal_value(data)


def range_field(*, maximum: int, default: int, minimum: int = 1) -> serializers.IntegerField:
    """An optional integer argument bounded to minimum..maximum; outside it is a 400 naming the range (never clamped)."""
    message = f"must be between {minimum} and {maximum}."
    return serializers.IntegerField(
        required=False,
        default=default,
        min_value=minimum,
        max_value=maximum,
        error_messages={"min_value": message, "max_value": message},
    )


def request_scope(request: Any, data: dict[str, Any]) -> Any:
    """The scope for this call (exograph.core.scope.scope_resolve): the graph_scope argument if given, else the
    X-Graph-Scope header if sent, else private."""
    from exograph.core.scope import scope_resolve

    return scope_resolve(request, data.get("graph_scope"))
