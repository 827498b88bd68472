"""Parse X-Graph-Scope once per request into request.graph_scope."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse

from exograph.core.api import error_body
from exograph.core.errors import ValidationError
from exograph.core.scope import SCOPE_HEADER, parse_scope


class GraphScopeMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            request.graph_scope = parse_scope(request.headers.get(SCOPE_HEADER), source=SCOPE_HEADER)  # type: ignore[attr-defined]
        except ValidationError as exc:
            return JsonResponse(error_body(exc.code, exc.message, exc.hint), status=exc.status)
        return self.get_response(request)
