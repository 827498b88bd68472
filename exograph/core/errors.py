"""The errors services raise. Each interface (REST, web, MCP) translates them in one place."""

from __future__ import annotations


class ExoGraphError(Exception):
    """Base class: an HTTP status, a stable machine code, a message and a hint that names the fix."""

    status = 400
    code = "invalid"
    hint = ""

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        hint: str | None = None,
        extra: dict[str, object] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or self.code
        self.hint = hint if hint is not None else self.hint
        self.extra = extra or {}
        self.headers = headers or {}


class ValidationError(ExoGraphError):
    status, code = 400, "invalid"


class Unauthenticated(ExoGraphError):
    status, code = 401, "unauthenticated"


class InsufficientCredits(ExoGraphError):
    status, code = 402, "insufficient_credits"
    hint = "Buy credits on the billing page or with POST /api/v1/billing/checkout/."


class PermissionDenied(ExoGraphError):
    status, code = 403, "forbidden"


class NotFound(ExoGraphError):
    status, code = 404, "not_found"


class Conflict(ExoGraphError):
    status, code = 409, "conflict"


class PayloadTooLarge(ExoGraphError):
    status, code = 413, "payload_too_large"


class UnsupportedMediaType(ExoGraphError):
    status, code = 415, "unsupported_media_type"


class RateLimited(ExoGraphError):
    status, code = 429, "rate_limited"


class ServiceUnavailable(ExoGraphError):
    """A dependency is down. The message names it; never dressed up as an empty result."""

    status, code = 503, "service_unavailable"
    hint = "This is on our side; retry in a moment."


class TransientError(ExoGraphError):
    """An integration failed in a way worth retrying (timeouts, 5xx, connection resets)."""

    status, code = 503, "transient_error"


class PermanentError(ExoGraphError):
    """An integration failed in a way a retry will not fix."""

    status, code = 502, "upstream_error"


class Warming(Exception):  # noqa: N818 (a state, not a failure)
    """Raised by a readiness check whose component is still starting (e.g. loading a model): /readyz answers 503
    `warming` (exograph.core.views). Here, not in the views, so the checks' owners need not import a door."""
