"""DRF authentication: API keys (Bearer or X-API-Key) and the web session, one account behind both."""

from __future__ import annotations

import re
from typing import Any

from rest_framework import authentication
from rest_framework.request import Request

from exograph.accounts.models import User
from exograph.accounts.services import api_key_authenticate
from exograph.core.errors import Unauthenticated
from exograph.core.proxies import client_ip
from exograph.core.ratelimit import address_check_defer, address_throttle, throttle_settles_address_check
from exograph.core.spending import spending_key_use

# What an error may repeat of an Authorization header's first word: a scheme's name (Basic, Token), never a key.
_SCHEME_NAME = re.compile(r"[A-Za-z][A-Za-z0-9-]{0,19}")


def _scheme_refused(scheme: str) -> Unauthenticated:
    """The 401 for an Authorization header not 'Bearer <key>'. It names the scheme only when the first word is a
    scheme's name: a key sent alone or glued to a word ('exo_…', 'bearer:exo_…') is never echoed, even in part."""
    if "exo_" in scheme:
        return Unauthenticated(
            "The Authorization header holds an API key without its scheme.",
            code="invalid_auth_scheme",
            hint="Put 'Bearer ' before the key: 'Authorization: Bearer exo_…' (or send it as 'X-API-Key: exo_…').",
        )
    named = f" '{scheme}'" if _SCHEME_NAME.fullmatch(scheme) else ""
    return Unauthenticated(
        f"Unsupported authorization scheme{named}.",
        code="invalid_auth_scheme",
        hint="Send 'Authorization: Bearer exo_…' or 'X-API-Key: exo_…'.",
    )


class ApiKeyAuthentication(authentication.BaseAuthentication):
    """`Authorization: Bearer exo_…` or `X-API-Key: exo_…`."""

    def authenticate(self, request: Request) -> tuple[User, Any] | None:
        header = request.META.get("HTTP_AUTHORIZATION", "").strip()
        x_api_key = request.META.get("HTTP_X_API_KEY", "").strip()
        if header:
            scheme, _, credentials = header.partition(" ")
            if scheme.lower() != "bearer":
                raise _scheme_refused(scheme)
            if not credentials.strip():
                raise Unauthenticated(
                    "The Bearer token is empty.", code="invalid_api_key", hint="Send 'Authorization: Bearer exo_…'."
                )
            raw = credentials
        elif x_api_key:
            raw = x_api_key
        else:
            return None
        # Failed keys are counted per client address; past the limit every key from there gets 429 (even a right one,
        # or guessing would still learn when it hits). A wrong key costs one call: counted, or refused uncounted past
        # the limit. The check of a right key is looked at (never counted) before the database is asked, else it is
        # left to the view's first throttle, which asks it with the account's count in one round trip, or to the error
        # answer of anything refused before that throttle (exograph.core.ratelimit.address_check_defer).
        address = client_ip(request)
        checked = False

        def address_check() -> None:
            nonlocal checked
            checked = True
            address_throttle(action="api_key", address=address, count=False)

        try:
            key = api_key_authenticate(raw=raw, before_database=address_check)
        except Unauthenticated:
            address_throttle(action="api_key", address=address)
            raise
        if not checked:
            view = request.parser_context.get("view") if request.parser_context else None
            if throttle_settles_address_check(view):
                address_check_defer(request._request, action="api_key", address=address)
            else:
                address_check()
        request._request.api_key = key  # type: ignore[attr-defined]
        # Spends of this request count against the key (its monthly cap, if any, is checked where money is spent:
        # billing.services.caps).
        spending_key_use(key_id=key.id, capped=key.monthly_credit_cap is not None)
        return key.user, key

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="api"'


class SessionAuthentication(authentication.SessionAuthentication):
    """The web session (with CSRF), so the browser UI can call the same API."""
