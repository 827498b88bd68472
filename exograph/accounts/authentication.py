"""DRF authentication: API keys (Bearer or X-API-Key) and the web session, one account behind both."""

from __future__ import annotations

from typing import Any

from rest_framework import authentication
from rest_framework.request import Request

from exograph.accounts.models import User
from exograph.accounts.services import api_key_authenticate
from exograph.core.errors import Unauthenticated
from exograph.core.proxies import client_ip
from exograph.core.ratelimit import address_throttle
from exograph.core.spending import spending_key_use


class ApiKeyAuthentication(authentication.BaseAuthentication):
    """`Authorization: Bearer exo_…` or `X-API-Key: exo_…`."""

    def authenticate(self, request: Request) -> tuple[User, Any] | None:
        header = request.META.get("HTTP_AUTHORIZATION", "").strip()
        x_api_key = request.META.get("HTTP_X_API_KEY", "").strip()
        if header:
            scheme, _, credentials = header.partition(" ")
            if scheme.lower() != "bearer":
                raise Unauthenticated(
                    f"Unsupported authorization scheme '{scheme[:20]}'.",
                    code="invalid_auth_scheme",
                    hint="Send 'Authorization: Bearer exo_…' or 'X-API-Key: exo_…'.",
                )
            if not credentials.strip():
                raise Unauthenticated(
                    "The Bearer token is empty.", code="invalid_api_key", hint="Send 'Authorization: Bearer exo_…'."
                )
            raw = credentials
        elif x_api_key:
            raw = x_api_key
        else:
            return None
        # Failed keys are counted per client address; past the limit every key from there gets 429
        # (even a right one, or guessing would still learn when it hits).
        address = client_ip(request)
        address_throttle(action="api_key", address=address, count=False)
        try:
            key = api_key_authenticate(raw=raw)
        except Unauthenticated:
            address_throttle(action="api_key", address=address)
            raise
        request._request.api_key = key  # type: ignore[attr-defined]
        # Spends of this request count against the key (its monthly cap, if any, is checked where money is spent:
        # billing.services.caps).
        spending_key_use(key_id=key.id, capped=key.monthly_credit_cap is not None)
        return key.user, key

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="api"'


class SessionAuthentication(authentication.SessionAuthentication):
    """The web session (with CSRF), so the browser UI can call the same API."""
