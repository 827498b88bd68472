"""django-axes glue: login lockout per account (across addresses) and per address, ids-only log lines."""

from __future__ import annotations

import hashlib
from typing import Any

from axes.backends import AxesStandaloneBackend
from django.http import HttpRequest


def login_username(request: HttpRequest | None, credentials: dict[str, Any] | None = None) -> str:
    """The account a login attempt names, normalised, so case or spaces never buy more guesses."""
    credentials = credentials or {}
    raw = credentials.get("username") or credentials.get("email")
    if raw is None and request is not None:
        raw = request.POST.get("username") or request.POST.get("email")
    return str(raw or "").strip().lower()


def login_client_str(username: str, ip_address: str, user_agent: str, path_info: Any, request: HttpRequest) -> str:
    """How axes names a client in log lines: a digest of the account, the address and the path, never the email."""
    account = hashlib.sha256(username.encode()).hexdigest()[:12] if username else "-"
    path = path_info[0] if isinstance(path_info, (tuple, list)) else path_info
    return f"{{account: {account}, ip_address: {ip_address}, path: {path}}}"


class LoginLockoutBackend(AxesStandaloneBackend):
    """Axes' lockout check for every authenticate() that comes with a request (web and admin login).

    Without a request there is no client to lock out (e.g. the test client's login()); axes would raise.
    """

    def authenticate(
        self, request: HttpRequest | None, username: str | None = None, password: str | None = None, **kwargs: Any
    ) -> None:  # type: ignore[override]
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)  # type: ignore[arg-type]
