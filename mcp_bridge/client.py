"""ExoGraphClient: a small async client for the ExoGraph REST API (used by the MCP bridge, usable alone).

    async with ExoGraphClient(base_url="https://exograph.example", api_key="exo_…", scope="private") as exo:
        page = await exo.get("/api/v1/entities/search", params={"query": "transformers"})

Every non-2xx answer raises `ExoGraphAPIError` with the REST error envelope's status, code, message
and hint. API keys never appear in error texts or log lines (`mask_secrets`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from types import TracebackType
from typing import Any
from urllib.parse import quote

import httpx

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 120.0
USER_AGENT = "exograph-mcp/1.0"
SCOPES = ("world", "private")

# exo_<prefix>_<secret>, and any Bearer token: masked wherever text leaves the bridge.
_KEY_PATTERN = re.compile(r"exo_[A-Za-z0-9_\-]{4,}")
_BEARER_PATTERN = re.compile(r"(?i)(bearer\s+)[^\s\"',;]+")


def mask_secrets(text: str, *secrets: str | None) -> str:
    """Text with API keys and Bearer tokens replaced by `exo_***` / `Bearer ***`."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    text = _KEY_PATTERN.sub("exo_***", text)
    return _BEARER_PATTERN.sub(r"\1***", text)


class ExoGraphAPIError(Exception):
    """A REST error answer (or a transport failure, status 0): status, code, message, hint, extra."""

    def __init__(
        self,
        *,
        status: int,
        code: str,
        message: str,
        hint: str = "",
        extra: Mapping[str, Any] | None = None,
        retry_after: int | None = None,
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
        return f"{text} {self.hint}".strip() if self.hint else text


def _error_from_response(response: httpx.Response, secrets: tuple[str | None, ...]) -> ExoGraphAPIError:
    retry_after: int | None = None
    raw_retry = response.headers.get("Retry-After")
    if raw_retry and raw_retry.strip().isdigit():
        retry_after = int(raw_retry.strip())
    try:
        body = response.json()
    except ValueError:
        body = None
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        extra = {k: v for k, v in error.items() if k not in ("code", "message", "hint")}
        if retry_after is None and isinstance(extra.get("retry_after"), int):
            retry_after = int(extra["retry_after"])
        return ExoGraphAPIError(
            status=response.status_code,
            code=str(error.get("code") or "error"),
            message=mask_secrets(str(error.get("message") or response.reason_phrase), *secrets),
            hint=mask_secrets(str(error.get("hint") or ""), *secrets),
            extra=extra,
            retry_after=retry_after,
        )
    return ExoGraphAPIError(
        status=response.status_code,
        code="http_error",
        message=f"The ExoGraph API answered {response.status_code} {response.reason_phrase} without an error body.",
        hint="Check EXOGRAPH_API_URL points at an ExoGraph server; retry in a moment if it is restarting.",
        retry_after=retry_after,
    )


class ExoGraphClient:
    """Async REST client: base URL + API key + default graph scope. Raises ExoGraphAPIError on any failure."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        scope: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.AsyncBaseTransport | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> None:
        if scope is not None and scope not in SCOPES:
            raise ValueError(f"scope must be 'world' or 'private'; got {scope[:40]!r}.")
        self.base_url = base_url.rstrip("/")
        self.scope = scope
        self._api_key = api_key
        headers = {"Authorization": f"Bearer {api_key}", "User-Agent": USER_AGENT, "Accept": "application/json"}
        if scope:
            headers["X-Graph-Scope"] = scope
        headers.update(extra_headers or {})
        self._http = httpx.AsyncClient(base_url=self.base_url, headers=headers, timeout=timeout, transport=transport)

    @classmethod
    def in_process(
        cls, *, asgi_app: Any, api_key: str, scope: str | None = None, host: str = "localhost", **kwargs: Any
    ) -> ExoGraphClient:
        """A client that calls an ASGI application directly (no network hop): the hosted MCP mode."""
        # https: the request is as secure as the one that reached /mcp, and SECURE_SSL_REDIRECT stays quiet.
        transport = httpx.ASGITransport(app=asgi_app, client=("127.0.0.1", 0))
        return cls(base_url=f"https://{host}", api_key=api_key, scope=scope, transport=transport, **kwargs)

    async def __aenter__(self) -> ExoGraphClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    def __repr__(self) -> str:
        return f"ExoGraphClient(base_url={self.base_url!r}, api_key='exo_***', scope={self.scope!r})"

    def _scope_params(self, params: Mapping[str, Any] | None) -> dict[str, Any]:
        return {k: v for k, v in (params or {}).items() if v is not None}

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> Any:
        """One REST call; returns the decoded JSON (None for 204). Raises ExoGraphAPIError."""
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        query = self._scope_params(params)
        for key, value in list(query.items()):
            if isinstance(value, bool):
                query[key] = "true" if value else "false"
        try:
            response = await self._http.request(
                method, path, params=query or None, json=dict(json) if json is not None else None, headers=headers
            )
        except httpx.TimeoutException as exc:
            logger.warning("exograph api %s %s timed out", method, path)
            raise ExoGraphAPIError(
                status=0,
                code="timeout",
                message=f"The ExoGraph API did not answer {method} {path} in time.",
                hint="Retry in a moment; large uploads may take longer.",
            ) from exc
        except httpx.HTTPError as exc:
            logger.warning("exograph api %s %s failed: %s", method, path, type(exc).__name__)
            raise ExoGraphAPIError(
                status=0,
                code="connection_error",
                message=f"Could not reach the ExoGraph API at {self.base_url} ({type(exc).__name__}).",
                hint="Check EXOGRAPH_API_URL and that the server is running.",
            ) from exc
        logger.debug("exograph api %s %s -> %s", method, path, response.status_code)
        if response.status_code >= 400:
            raise _error_from_response(response, (self._api_key,))
        if response.status_code == 204 or not response.content:
            return None
        try:
            return response.json()
        except ValueError as exc:
            raise ExoGraphAPIError(
                status=response.status_code,
                code="invalid_response",
                message=f"The ExoGraph API answered {method} {path} with something that is not JSON.",
                hint="Check EXOGRAPH_API_URL points at an ExoGraph server.",
            ) from exc

    async def get(self, path: str, *, params: Mapping[str, Any] | None = None) -> Any:
        return await self.request("GET", path, params=params)

    async def post(
        self,
        path: str,
        *,
        json: Mapping[str, Any] | None = None,
        params: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> Any:
        return await self.request("POST", path, json=json, params=params, idempotency_key=idempotency_key)

    # The endpoints the tools use, by name (the v1 contract).

    async def search_entities(
        self, *, query: str, n_results: int = 10, graph_id: str | None = None, graph_scope: str | None = None
    ) -> dict[str, Any]:
        return dict(
            await self.get(
                "/api/v1/entities/search",
                params={"query": query, "n_results": n_results, "graph_id": graph_id, "graph_scope": graph_scope},
            )
        )

    async def world_entity(self, *, entity_id: str, evidence: bool = False) -> dict[str, Any]:
        return dict(
            await self.get(f"/api/v1/world/entities/{quote(entity_id, safe='')}/", params={"evidence": evidence})
        )

    async def graphs(
        self, *, graph_scope: str | None = None, limit: int | None = None, offset: int | None = None
    ) -> dict[str, Any]:
        return dict(
            await self.get("/api/v1/graphs/", params={"graph_scope": graph_scope, "limit": limit, "offset": offset})
        )

    async def documents(
        self, *, graph_scope: str | None = None, limit: int | None = None, offset: int | None = None
    ) -> dict[str, Any]:
        return dict(
            await self.get("/api/v1/documents/", params={"graph_scope": graph_scope, "limit": limit, "offset": offset})
        )

    async def document(self, *, document_id: str) -> dict[str, Any]:
        return dict(await self.get(f"/api/v1/documents/{quote(document_id, safe='')}/"))

    async def document_upload(self, *, body: Mapping[str, Any], idempotency_key: str | None = None) -> dict[str, Any]:
        return dict(await self.post("/api/v1/documents/", json=body, idempotency_key=idempotency_key))

    async def balance(self) -> dict[str, Any]:
        return dict(await self.get("/api/v1/billing/balance"))

    async def chat_session_create(self, *, body: Mapping[str, Any]) -> dict[str, Any]:
        return dict(await self.post("/api/v1/chat/sessions/", json=body))

    async def chat_sessions(
        self, *, graph_scope: str | None = None, limit: int | None = None, cursor: str | None = None
    ) -> dict[str, Any]:
        return dict(
            await self.get(
                "/api/v1/chat/sessions/", params={"graph_scope": graph_scope, "limit": limit, "cursor": cursor}
            )
        )

    async def chat_message_send(self, *, body: Mapping[str, Any], idempotency_key: str | None = None) -> dict[str, Any]:
        return dict(await self.post("/api/v1/chat/messages/", json=body, idempotency_key=idempotency_key))

    async def research_create(self, *, body: Mapping[str, Any], idempotency_key: str | None = None) -> dict[str, Any]:
        return dict(await self.post("/api/v1/research/", json=body, idempotency_key=idempotency_key))

    async def research(self, *, session_id: str) -> dict[str, Any]:
        return dict(await self.get(f"/api/v1/research/{quote(session_id, safe='')}/"))

    async def research_sessions(
        self, *, graph_scope: str | None = None, limit: int | None = None, cursor: str | None = None
    ) -> dict[str, Any]:
        return dict(
            await self.get("/api/v1/research/", params={"graph_scope": graph_scope, "limit": limit, "cursor": cursor})
        )
