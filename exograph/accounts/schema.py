"""OpenAPI descriptions of our authentication classes (drf-spectacular)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiKeyScheme(OpenApiAuthenticationExtension):
    target_class = "exograph.accounts.authentication.ApiKeyAuthentication"
    name = ["BearerApiKey", "HeaderApiKey"]

    def get_security_definition(self, auto_schema: Any) -> list[dict[str, str]]:
        return [
            {"type": "http", "scheme": "bearer", "bearerFormat": "exo_…", "description": "Authorization: Bearer exo_…"},
            {"type": "apiKey", "in": "header", "name": "X-API-Key", "description": "X-API-Key: exo_…"},
        ]


class SessionScheme(OpenApiAuthenticationExtension):
    target_class = "exograph.accounts.authentication.SessionAuthentication"
    name = "cookieAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "apiKey", "in": "cookie", "name": "sessionid"}
