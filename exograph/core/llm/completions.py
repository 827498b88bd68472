"""OpenAI-compatible chat completions (vLLM, Ollama, OpenAI, ...) through the official `openai` SDK.

Settings: LLM_BASE_URL (e.g. http://127.0.0.1:8001/v1), LLM_API_KEY, LLM_MODEL, LLM_TIMEOUT_SECONDS, LLM_MAX_RETRIES.
Documents uses it for structured extraction; chat uses exograph.core.llm.providers (the official SDKs).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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
    """One chat completion from {LLM_BASE_URL} through the official `openai` SDK, with its retries (LLM_MAX_RETRIES:
    connection errors, 408/409/429/5xx, exponential backoff honouring Retry-After) and timeout.

    Raises LLMTransientError (retry), LLMTimeoutError, LLMPermanentError (don't), ServiceUnavailable (no LLM
    configured)."""
    import openai

    if not llm_configured():
        raise ServiceUnavailable(
            "No LLM is configured.", code="llm_not_configured", hint="Set LLM_BASE_URL and LLM_MODEL."
        )
    client = openai.OpenAI(
        base_url=settings.LLM_BASE_URL,
        api_key=settings.LLM_API_KEY or "none",
        timeout=timeout or settings.LLM_TIMEOUT_SECONDS,
        max_retries=settings.LLM_MAX_RETRIES,
    )
    options: dict[str, Any] = {}
    if max_tokens:
        options["max_tokens"] = max_tokens
    if json_schema is not None:
        options["response_format"] = {"type": "json_schema", "json_schema": {"strict": True, **json_schema}}
    chosen = model or settings.LLM_MODEL
    try:
        completion = client.chat.completions.create(
            model=chosen,
            messages=messages,  # type: ignore[arg-type]
            temperature=temperature,
            **options,
        )
    except openai.APITimeoutError as exc:
        raise LLMTimeoutError("The LLM endpoint did not answer in time.", hint="Retry later.") from exc
    except openai.APIStatusError as exc:
        if exc.status_code == 429 or exc.status_code >= 500:
            raise LLMTransientError(f"The LLM endpoint answered {exc.status_code}.") from exc
        raise LLMPermanentError(f"The LLM endpoint refused the request ({exc.status_code}).") from exc
    except openai.APIConnectionError as exc:
        raise LLMTransientError(f"The LLM endpoint is unreachable ({type(exc.__cause__ or exc).__name__}).") from exc
    except openai.APIError as exc:  # a 200 whose body is not a completion
        raise LLMTransientError("The LLM endpoint returned a malformed reply.") from exc
    try:
        content = completion.choices[0].message.content or ""
    except (IndexError, AttributeError, TypeError) as exc:
        raise LLMTransientError("The LLM endpoint returned a malformed reply.") from exc
    usage = completion.usage.model_dump() if completion.usage is not None else {}
    return ChatReply(content=str(content), model=str(completion.model or chosen), usage=usage)


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
