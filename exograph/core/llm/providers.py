"""Chat generation through the official SDKs: `openai` (any OpenAI-compatible base URL) and `anthropic`.

Both stream (tokens go to `on_token` as they arrive). Timeouts and retries (backoff, Retry-After)
are the SDKs' own, from LLM_TIMEOUT_SECONDS and LLM_MAX_RETRIES. Errors after the SDK's retries:
a 4xx is LLMPermanentError (502), 429/5xx/connection errors LLMTransientError (503), a timeout
LLMTimeoutError (504); each names the provider. The `extractive` provider never calls this module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from exograph.core.errors import ValidationError
from exograph.core.llm.completions import LLMPermanentError, LLMTimeoutError, LLMTransientError

PROVIDERS = ("extractive", "openai", "anthropic")
MODELS = ("snap", "ponder")

TokenSink = Callable[[str], None]


@dataclass(frozen=True)
class Generation:
    text: str
    provider: str
    model: str
    input_tokens: int = 0
    output_tokens: int = 0


def model_for(name: str) -> str:
    """The configured provider model for `snap` or `ponder`. Raises ValidationError on another name."""
    if name not in MODELS:
        raise ValidationError(
            f"Unknown model {name[:40]!r}; allowed: {', '.join(MODELS)}.",
            code="invalid_model",
            hint="Send model snap (fast) or ponder (deep).",
        )
    return str(settings.CHAT_SNAP_MODEL if name == "snap" else settings.CHAT_PONDER_MODEL)


def context_tokens_for(name: str) -> int:
    """The context budget (tokens) of `snap` or `ponder`."""
    return int(settings.CHAT_SNAP_CONTEXT_TOKENS if name == "snap" else settings.CHAT_PONDER_CONTEXT_TOKENS)


def _status_error(provider: str, status: int) -> Exception:
    if status == 429 or status >= 500:
        return LLMTransientError(
            f"The {provider} provider answered {status}.", code="llm_unavailable", extra={"provider": provider}
        )
    return LLMPermanentError(
        f"The {provider} provider refused the request ({status}).",
        code="llm_rejected",
        hint=f"Check the {provider} API key and the configured model names.",
        extra={"provider": provider},
    )


def _timeout(provider: str) -> Exception:
    return LLMTimeoutError(
        f"The {provider} provider did not answer in time.",
        hint="Retry later, or raise LLM_TIMEOUT_SECONDS.",
        extra={"provider": provider},
    )


def _unreachable(provider: str, exc: Exception) -> Exception:
    return LLMTransientError(
        f"The {provider} provider is unreachable ({type(exc).__name__}).",
        code="llm_unavailable",
        extra={"provider": provider},
    )


def _broken_stream(provider: str) -> Exception:
    """An error event inside a streamed answer (the provider failed after it began): transient."""
    return LLMTransientError(
        f"The {provider} provider failed while answering.",
        code="llm_unavailable",
        hint="Retry in a moment.",
        extra={"provider": provider},
    )


def _openai_generate(
    *, model: str, system: str, messages: list[dict[str, str]], max_tokens: int, on_token: TokenSink | None
) -> Generation:
    import openai

    client = openai.OpenAI(
        base_url=settings.LLM_BASE_URL or None,
        api_key=settings.LLM_API_KEY or "none",
        timeout=settings.LLM_TIMEOUT_SECONDS,
        max_retries=settings.LLM_MAX_RETRIES,
    )
    parts: list[str] = []
    usage: Any = None
    try:
        stream = client.chat.completions.create(  # type: ignore[call-overload]
            model=model,
            messages=[{"role": "system", "content": system}, *messages],
            max_tokens=max_tokens,
            temperature=0.0,
            stream=True,
            stream_options={"include_usage": True},
        )
        for chunk in stream:
            if chunk.usage is not None:
                usage = chunk.usage
            for choice in chunk.choices or []:
                piece = choice.delta.content if choice.delta else None
                if piece:
                    parts.append(piece)
                    if on_token is not None:
                        on_token(piece)
    except openai.APITimeoutError as exc:
        raise _timeout("openai") from exc
    except openai.APIStatusError as exc:
        raise _status_error("openai", exc.status_code) from exc
    except openai.APIConnectionError as exc:
        raise _unreachable("openai", exc) from exc
    except openai.APIError as exc:
        raise _broken_stream("openai") from exc
    return Generation(
        text="".join(parts),
        provider="openai",
        model=model,
        input_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        output_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
    )


def _anthropic_generate(
    *, model: str, system: str, messages: list[dict[str, str]], max_tokens: int, on_token: TokenSink | None
) -> Generation:
    import anthropic

    client = anthropic.Anthropic(
        base_url=settings.ANTHROPIC_BASE_URL or None,
        api_key=settings.ANTHROPIC_API_KEY or "none",
        timeout=settings.LLM_TIMEOUT_SECONDS,
        max_retries=settings.LLM_MAX_RETRIES,
    )
    parts: list[str] = []
    try:
        with client.messages.stream(
            model=model,
            system=system,
            messages=messages,  # type: ignore[arg-type]
            max_tokens=max_tokens,
        ) as stream:
            for piece in stream.text_stream:
                parts.append(piece)
                if on_token is not None:
                    on_token(piece)
            final = stream.get_final_message()
    except anthropic.APITimeoutError as exc:
        raise _timeout("anthropic") from exc
    except anthropic.APIStatusError as exc:
        if exc.status_code < 400:  # an `error` event inside a 200 stream (e.g. overloaded_error midway)
            raise _broken_stream("anthropic") from exc
        raise _status_error("anthropic", exc.status_code) from exc
    except anthropic.APIError as exc:
        raise _unreachable("anthropic", exc) from exc
    return Generation(
        text="".join(parts),
        provider="anthropic",
        model=model,
        input_tokens=int(final.usage.input_tokens or 0),
        output_tokens=int(final.usage.output_tokens or 0),
    )


def llm_generate(
    *,
    provider: str,
    model: str,
    system: str,
    messages: list[dict[str, str]],
    max_tokens: int,
    on_token: TokenSink | None = None,
) -> Generation:
    """Generate (streaming) with the `openai` or `anthropic` SDK. Network call; raises LLMPermanentError,
    LLMTransientError, LLMTimeoutError (each naming the provider) or ValidationError (other provider)."""
    if provider == "openai":
        return _openai_generate(model=model, system=system, messages=messages, max_tokens=max_tokens, on_token=on_token)
    if provider == "anthropic":
        return _anthropic_generate(
            model=model, system=system, messages=messages, max_tokens=max_tokens, on_token=on_token
        )
    raise ValidationError(
        f"Unknown generating provider {provider[:40]!r}; allowed: openai, anthropic.", code="invalid_provider"
    )
