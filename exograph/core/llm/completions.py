"""A small client for OpenAI-compatible chat completions (vLLM, Ollama, OpenAI, ...).

Settings: LLM_BASE_URL (e.g. http://127.0.0.1:8001/v1), LLM_API_KEY, LLM_MODEL, LLM_TIMEOUT_SECONDS.
Documents uses it for structured extraction; chat uses exograph.core.llm.providers (the official SDKs).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import httpx
from django.conf import settings

from exograph.core.errors import ExoGraphError, PermanentError, ServiceUnavailable, TransientError


class LLMError(ExoGraphError):
    """The LLM endpoint failed: LLMTransientError (retry) or LLMPermanentError (don't)."""

    status, code = 503, "llm_error"


class LLMTransientError(LLMError, TransientError):
    """Connection, timeout, 5xx, 429 or a malformed reply: worth retrying."""

    status, code = 503, "llm_error"


class LLMPermanentError(LLMError, PermanentError):
    """The endpoint refused the request (4xx: credentials, model, schema): a retry will not fix it."""

    status, code = 502, "llm_rejected"


class LLMTimeoutError(LLMTransientError):
    """The provider did not answer in time (after the SDK's retries)."""

    status, code = 504, "llm_timeout"


@dataclass(frozen=True)
class ChatReply:
    content: str
    model: str
    usage: dict[str, Any] = field(default_factory=dict)


def llm_configured() -> bool:
    return bool(settings.LLM_BASE_URL and settings.LLM_MODEL)


def llm_chat_complete(
    *,
    messages: list[dict[str, str]],
    model: str | None = None,
    json_schema: dict[str, Any] | None = None,
    temperature: float = 0.0,
    max_tokens: int | None = None,
    timeout: float | None = None,
) -> ChatReply:
    """POST {LLM_BASE_URL}/chat/completions and return the first choice's content.

    Raises LLMTransientError (retry), LLMPermanentError (don't), ServiceUnavailable (no LLM configured)."""
    if not llm_configured():
        raise ServiceUnavailable(
            "No LLM is configured.", code="llm_not_configured", hint="Set LLM_BASE_URL and LLM_MODEL."
        )
    body: dict[str, Any] = {"model": model or settings.LLM_MODEL, "messages": messages, "temperature": temperature}
    if max_tokens:
        body["max_tokens"] = max_tokens
    if json_schema is not None:
        body["response_format"] = {"type": "json_schema", "json_schema": {"strict": True, **json_schema}}
    headers = {"Content-Type": "application/json"}
    if settings.LLM_API_KEY:
        headers["Authorization"] = f"Bearer {settings.LLM_API_KEY}"
    url = settings.LLM_BASE_URL.rstrip("/") + "/chat/completions"
    try:
        response = httpx.post(url, json=body, headers=headers, timeout=timeout or settings.LLM_TIMEOUT_SECONDS)
    except httpx.HTTPError as exc:
        raise LLMTransientError(f"The LLM endpoint is unreachable ({type(exc).__name__}).") from exc
    if response.status_code == 429 or response.status_code >= 500:
        raise LLMTransientError(f"The LLM endpoint answered {response.status_code}.")
    if response.status_code >= 400:
        raise LLMPermanentError(f"The LLM endpoint refused the request ({response.status_code}).")
    try:
        payload = response.json()
        choice = payload["choices"][0]["message"]
        content = choice.get("content") or ""
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise LLMTransientError("The LLM endpoint returned a malformed reply.") from exc
    return ChatReply(
        content=str(content), model=str(payload.get("model", body["model"])), usage=payload.get("usage") or {}
    )


__all__ = [
    "ChatReply",
    "LLMError",
    "LLMPermanentError",
    "LLMTimeoutError",
    "LLMTransientError",
    "PermanentError",
    "llm_chat_complete",
    "llm_configured",
]
