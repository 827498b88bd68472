"""The API key's permission, enforced for every REST endpoint (so MCP, which calls REST, behaves the same)."""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request

from exograph.accounts.models import ApiKey
from exograph.core.errors import PermissionDenied


class ApiKeyPermission(BasePermission):
    """A read-only key may read (GET, HEAD, OPTIONS): search, explore and list. Any write answers 403 key_read_only.

    (A capped key's limit is enforced by billing where credits are spent: billing.services.caps.)
    """

    def has_permission(self, request: Request, view: Any) -> bool:
        key = request.auth
        if isinstance(key, ApiKey) and key.read_only and request.method not in SAFE_METHODS:
            raise PermissionDenied(
                f"This API key ({key.display_prefix}) is read-only: it may search, explore and list, "
                f"not {request.method} {request.path}.",
                code="key_read_only",
                hint="Use an API key with full permission for uploads, chat messages, research and other "
                "changes, or change this key's permission on the API keys page.",
                extra={"key_permission": key.permission},
            )
        return True
