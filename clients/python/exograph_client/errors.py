"""Exceptions: every error answer of the API becomes an ExoGraphError carrying its envelope
({"error": {"code", "message", "hint", ...}}), a subclass per status where one helps."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import httpx

_KEY_PATTERN = re.compile(r"exo_[A-Za-z0-9_\-]{4,}")


def mask_secrets(text: str) -> str:
    """API keys never travel in exception texts."""
    return _KEY_PATTERN.sub("exo_***", text)


class ExoGraphError(Exception):
    """An error answer (or, with status 0, a transport failure): status, code, message, hint, extra, retry_after."""

    def __init__(
        self,
        *,
        status: int,
        code: str,
        message: str,
        hint: str = "",
        extra: Mapping[str, Any] | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.hint = hint
        self.extra = dict(extra or {})
        self.retry_after = retry_after

    def __str__(self) -> str:
        text = f"{self.status} {self.code}: {self.message}"
        return f"{text} ({self.hint})" if self.hint else text


class InvalidRequestError(ExoGraphError):
    """400."""


class AuthenticationError(ExoGraphError):
    """401: no API key, or an unknown or revoked one."""


class InsufficientCreditsError(ExoGraphError):
    """402: extra carries `needed` and `balance`."""


class PermissionDeniedError(ExoGraphError):
    """403."""


class NotFoundError(ExoGraphError):
    """404 (another account's object is 404 too)."""


class ConflictError(ExoGraphError):
    """409."""


class RateLimitError(ExoGraphError):
    """429 after the retries: retry_after says how long to wait."""


class ServiceUnavailableError(ExoGraphError):
    """503 after the retries (a dependency down, or the server at capacity)."""


class TransportError(ExoGraphError):
    """The server could not be reached or did not answer in time (status 0)."""


class DocumentFailedError(ExoGraphError):
    """wait_until_processed: the document failed or was cancelled (code document_failed / document_cancelled)."""


class WaitTimeoutError(ExoGraphError):
    """wait_until_processed / research wait: still not done when the time ran out."""


_BY_STATUS: dict[int, type[ExoGraphError]] = {
    400: InvalidRequestError,
    401: AuthenticationError,
    402: InsufficientCreditsError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    429: RateLimitError,
    503: ServiceUnavailableError,
}


def retry_after_of(response: httpx.Response) -> float | None:
    """Seconds from the Retry-After header (delta-seconds; an HTTP date is read as 'now'), else None."""
    raw = (response.headers.get("Retry-After") or "").strip()
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        return 0.0


def error_from_response(response: httpx.Response) -> ExoGraphError:
    """The exception for an error answer: the envelope's fields, or a generic http_error without one."""
    retry_after = retry_after_of(response)
    cls = _BY_STATUS.get(response.status_code, ExoGraphError)
    try:
        body = response.json()
    except ValueError:
        body = None
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        extra = {k: v for k, v in error.items() if k not in ("code", "message", "hint")}
        if retry_after is None and isinstance(extra.get("retry_after"), int | float):
            retry_after = float(extra["retry_after"])
        return cls(
            status=response.status_code,
            code=str(error.get("code") or "error"),
            message=mask_secrets(str(error.get("message") or response.reason_phrase)),
            hint=mask_secrets(str(error.get("hint") or "")),
            extra=extra,
            retry_after=retry_after,
        )
    return cls(
        status=response.status_code,
        code="http_error",
        message=f"The ExoGraph API answered {response.status_code} {response.reason_phrase} without an error body.",
        hint="Check the base URL points at an ExoGraph server.",
        retry_after=retry_after,
    )
