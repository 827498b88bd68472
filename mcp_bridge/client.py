"""ExoGraphClient: the MCP bridge's view of the ExoGraph REST API, over the Python client (exograph_client).

    async with ExoGraphClient(base_url="https://exograph.example", api_key="exo_…", scope="private") as exo:
        page = await exo.get("/api/v1/entities/search", params={"query": "transformers"})

There is one REST client in this repository, `exograph_client` (clients/python): this module sends every call
through its AsyncClient (transport, headers, scope, error envelopes) and keeps only what the tools need on top:
answers as plain JSON, no automatic retries (a tool reports a 429/503 with its Retry-After to the agent instead
of waiting inside a tool call), an Idempotency-Key only when the tool passes one, and error texts that name the
bridge's settings (EXOGRAPH_API_URL). Every non-2xx answer raises `ExoGraphAPIError` (an
`exograph_client.ExoGraphError`) with the REST error envelope's status, code, message and hint. API keys never
appear in error texts or log lines (`mask_secrets`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from types import TracebackType
from typing import Any
from urllib.parse import quote

import httpx
from exograph_client import AsyncClient, ExoGraphError
from exograph_client._core import Call

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 120.0
USER_AGENT = "exograph-mcp/1.0"
SCOPES = ("world", "private")

# exo_<prefix>_<secret>, and any Bearer token: masked wherever text leaves the bridge.
_KEY_PATTERN = re.compile(r"exo_[A-Za-z0-9_\-]{4,}")
_BEARER_PATTERN = re.compile(r"(?i)(bearer\s+)[^\s\"',;]+")

# The client's hints name its own arguments; the bridge's name its settings.
_BRIDGE_HINTS = {
    "timeout": "Retry in a moment; large uploads may take longer.",
    "connection_error": "Check EXOGRAPH_API_URL and that the server is running.",
    "http_error": "Check EXOGRAPH_API_URL points at an ExoGraph server; retry in a moment if it is restarting.",
    "invalid_response": "Check EXOGRAPH_API_URL points at an ExoGraph server.",
}


def mask_secrets(text: str, *secrets: str | None) -> str:
    """Text with API keys and Bearer tokens replaced by `exo_***` / `Bearer ***`."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    text = _KEY_PATTERN.sub("exo_***", text)
    return _BEARER_PATTERN.sub(r"\1***", text)


class ExoGraphAPIError(ExoGraphError):
    """A REST error answer (or a transport failure, status 0): status, code, message, hint, extra, retry_after
    (whole seconds, as the tools print it)."""

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
        super().__init__(status=status, code=code, message=message, hint=hint, extra=extra, retry_after=retry_after)
        self.retry_after: int | None = retry_after

    def __str__(self) -> str:
        text = f"{self.status} {self.code}: {self.message}"
        return f"{text} {self.hint}".strip() if self.hint else text


def _bridge_error(exc: ExoGraphError, secrets: tuple[str | None, ...]) -> ExoGraphAPIError:
    retry_after = int(exc.retry_after) if exc.retry_after is not None else None
    from_client = exc.status == 0 or exc.code in ("http_error", "invalid_response")  # no envelope: the client's words
    hint = _BRIDGE_HINTS.get(exc.code, exc.hint) if from_client else exc.hint
    return ExoGraphAPIError(
        status=exc.status,
        code=exc.code,
        message=mask_secrets(exc.message, *secrets),
        hint=mask_secrets(hint, *secrets),
        extra=exc.extra,
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
        # The Authorization header is set here, as the bridge always sent it: a hosted /mcp request without a key
        # still reaches the REST API (which answers its 401 envelope); the client itself refuses an empty key.
        self._client = AsyncClient(
            self.base_url,
            api_key or "unset",
            scope=scope,
            timeout=timeout,
            max_retries=0,
            transport=transport,
            headers={"Authorization": f"Bearer {api_key}", "User-Agent": USER_AGENT, **(extra_headers or {})},
        )

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
        await self._client.aclose()

    def __repr__(self) -> str:
        return f"ExoGraphClient(base_url={self.base_url!r}, api_key='exo_***', scope={self.scope!r})"

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
        call = Call(
            method,
            path,
            params=dict(params or {}),
            paid=idempotency_key is not None,
            idempotency_key=idempotency_key,
        )
        call.json = dict(json) if json is not None else None  # the body as the tool built it (nulls kept)
        try:
            answer = await self._client.call(call)
        except ExoGraphError as exc:
            if exc.status == 0:
                logger.warning("exograph api %s %s failed: %s", method, path, exc.code)
            else:
                logger.debug("exograph api %s %s -> %s", method, path, exc.status)
            raise _bridge_error(exc, (self._api_key,)) from exc
        logger.debug("exograph api %s %s answered", method, path)
        return answer

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
