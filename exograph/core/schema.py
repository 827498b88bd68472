"""OpenAPI (drf-spectacular): the error envelope, shared parameters and the AutoSchema of every operation.

Kept apart from exograph.core.api: drf_spectacular.openapi imports rest_framework.generics, which
imports DEFAULT_PAGINATION_CLASS (exograph.core.api.Pagination).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, inline_serializer
from rest_framework import serializers


class ErrorDetailOutSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="Stable machine code, e.g. invalid, not_found, insufficient_credits.")
    message = serializers.CharField(help_text="What went wrong, for people.")
    hint = serializers.CharField(allow_blank=True, help_text="What to do about it.")
    fields = serializers.JSONField(  # type: ignore[assignment]
        required=False, help_text="With code invalid: the problems per input field."
    )


class ErrorOutSerializer(serializers.Serializer):
    """The one error envelope of every endpoint: {"error": {"code", "message", "hint", ...}}."""

    error = ErrorDetailOutSerializer(
        help_text="Some errors add details beside code/message/hint: needed and balance (402), "
        "limit and retry_after (429), suggestions (404 of a world entity), document_id (409 duplicate)."
    )


ERROR_DESCRIPTIONS: dict[int, str] = {
    400: "Invalid input: a field, the X-Graph-Scope header, dry_run, Idempotency-Key or a malformed body; a NUL "
    "or a lone UTF-16 surrogate in any field, query parameter or header is invalid_text naming it in `field`. "
    "The message names the fix; nothing was charged.",
    401: "No API key, or an unknown or revoked one.",
    402: "Not enough credits (`needed`, `balance`); nothing was charged.",
    403: "This account may not do this.",
    404: "No such object in your account (another account's id is 404 too).",
    409: "Conflicts with the current state (the message says which).",
    413: "The request body or the file is larger than the limit.",
    415: "The body's Content-Type is not one this endpoint reads (application/json; multipart/form-data for uploads).",
    422: "The Idempotency-Key was used before for a different request.",
    429: "Rate limit spent: wait for Retry-After seconds (RateLimit-* headers tell the budget).",
    502: "The payment provider refused the request.",
    503: "A dependency is down (the message names it), or the service is at capacity (server_busy); nothing was "
    "charged; retry after Retry-After seconds.",
    504: "A dependency timed out (the message names it); retry later.",
}
# Any request may get these: bad scope header or body (400), no key (401), the rate limit (429)
# and the rate limiter's Redis down or the service at capacity (503); one with a body also a body past the limit (413) or an
# unreadable Content-Type (415).
COMMON_ERRORS = (400, 401, 429, 503)
BODY_ERRORS = (413, 415)
# Any write may meet the API key's limits: a read-only key (403 key_read_only) or its monthly credit cap
# spent (403 key_monthly_cap_reached, on endpoints that cost credits).
WRITE_ERRORS = (403,)
WRITE_METHODS = ("POST", "PUT", "PATCH", "DELETE")
KEY_LIMITS_403 = (
    "This API key may not do this: it is read-only (key_read_only), its monthly credit cap does not cover the "
    "cost (key_monthly_cap_reached, with monthly_credit_cap, spent_this_month, remaining, needed, resets), "
    "or the account may not."
)


def api_errors(*statuses: int, **descriptions: str) -> dict[int, OpenApiResponse]:
    """extend_schema responses for the error envelope, e.g. `{200: X, **api_errors(404, 409)}`.

    A keyword `e409="..."` replaces the generic description of that status.
    """
    return {
        status: OpenApiResponse(
            ErrorOutSerializer, description=descriptions.get(f"e{status}", ERROR_DESCRIPTIONS[status])
        )
        for status in statuses
    }


def results_of(serializer: type[serializers.Serializer], *, name: str) -> serializers.Serializer:
    """The documented shape of an unpaged list answered as {"results": [...]}."""
    return inline_serializer(name=name, fields={"results": serializer(many=True)})


GRAPH_SCOPE_HEADER = OpenApiParameter(
    "X-Graph-Scope",
    str,
    OpenApiParameter.HEADER,
    required=False,
    enum=["world", "private"],
    description="The default scope of this request (a graph_scope argument overrides it); private if absent.",
)

IDEMPOTENCY_KEY_HEADER = OpenApiParameter(
    "Idempotency-Key",
    {"type": "string", "minLength": 1, "maxLength": 200, "pattern": r"\S"},
    OpenApiParameter.HEADER,
    required=False,
    description="Up to 200 printable characters. A retry with the same key returns the first answer "
    "(with Idempotent-Replayed: true) and charges once.",
)


class AutoSchema(SpectacularAutoSchema):
    """drf-spectacular's AutoSchema plus what every operation shares: X-Graph-Scope, COMMON_ERRORS (and BODY_ERRORS)."""

    def get_override_parameters(self) -> list[Any]:
        return [GRAPH_SCOPE_HEADER, *super().get_override_parameters()]

    def _get_response_bodies(self, direction: Any = "response") -> dict[str, Any]:
        responses: dict[str, Any] = super()._get_response_bodies(direction)
        common = (*COMMON_ERRORS, *BODY_ERRORS) if self.method in ("POST", "PUT", "PATCH") else COMMON_ERRORS
        if self.method in WRITE_METHODS:
            common = (*common, *WRITE_ERRORS)
        for status, response in api_errors(*common, e403=KEY_LIMITS_403).items():
            if str(status) not in responses:
                responses[str(status)] = self._get_response_for_code(response, str(status), direction=direction)
        return responses
