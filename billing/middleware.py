"""Each request starts with no spending API key; ApiKeyAuthentication names it (billing.services.caps)."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from billing.services.caps import spending_key_clear


class SpendingKeyMiddleware:
    """Clears the spending key before the view and again after it.

    A thread that serves many requests (a sync server, a test client) must never spend through the
    previous request's key; under ASGI each request is its own context already.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        # Set, not reset by token: under ASGI the view may run in a copy of this context.
        spending_key_clear()
        try:
            return self.get_response(request)
        finally:
            spending_key_clear()
