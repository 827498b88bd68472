"""Chat providers through the official SDKs against loopback fakes of the real APIs (streaming)."""

from __future__ import annotations

import pytest

from exograph.core.llm import LLMPermanentError, LLMTimeoutError, LLMTransientError
from exograph.core.llm.extractive import NO_ANSWER, extractive_answer
from exograph.core.llm.providers import llm_generate
from tests.fakes.llm_chat import anthropic_error
from tests.fakes.openai_server import openai_error


def _ask(provider: str, tokens: list[str] | None = None):  # type: ignore[no-untyped-def]
    return llm_generate(
        provider=provider,
        model="m-snap",
        system="Answer from the evidence.",
        messages=[{"role": "user", "content": "Who founded Acme?"}],
        max_tokens=100,
        on_token=tokens.append if tokens is not None else None,
    )


def test_openai_sdk_streams_tokens_and_usage_from_the_chat_completions_api(openai_chat) -> None:  # type: ignore[no-untyped-def]
    openai_chat.queue("Acme was founded by Ada Lovelace [1].")
    tokens: list[str] = []
    reply = _ask("openai", tokens)
    assert reply.text == "Acme was founded by Ada Lovelace [1]."
    assert len(tokens) > 1 and "".join(tokens) == reply.text
    assert reply.output_tokens == 7 and reply.input_tokens > 0
    body = openai_chat.bodies[0]
    assert body["stream"] is True and body["model"] == "m-snap"
    assert body["messages"][0] == {"role": "system", "content": "Answer from the evidence."}


def test_anthropic_sdk_streams_tokens_and_usage_from_the_messages_api(anthropic_chat) -> None:  # type: ignore[no-untyped-def]
    anthropic_chat.queue("Ada Lovelace founded Acme [2].")
    tokens: list[str] = []
    reply = _ask("anthropic", tokens)
    assert reply.text == "Ada Lovelace founded Acme [2]."
    assert len(tokens) > 1 and "".join(tokens) == reply.text
    body = anthropic_chat.bodies[0]
    assert body["system"] == "Answer from the evidence." and body["stream"] is True
    sent = anthropic_chat.requests[0]
    assert anthropic_chat.api_key in (sent.header("x-api-key"), (sent.header("Authorization") or "")[7:])
    assert sent.header("anthropic-version")


def test_openai_4xx_is_permanent_and_not_retried(openai_chat) -> None:  # type: ignore[no-untyped-def]
    openai_chat.fail_next(404, openai_error("The model `m-snap` does not exist"))
    with pytest.raises(LLMPermanentError) as caught:
        _ask("openai")
    assert "openai" in caught.value.message and caught.value.status == 502
    assert len(openai_chat.requests) == 1


def test_anthropic_429_is_transient_after_the_sdk_retries_honouring_retry_after(anthropic_chat) -> None:  # type: ignore[no-untyped-def]
    anthropic_chat.fail_next(429, anthropic_error(429, "slow down"), times=2, headers={"retry-after": "0"})
    with pytest.raises(LLMTransientError) as caught:
        _ask("anthropic")
    assert caught.value.status == 503 and "anthropic" in caught.value.message
    assert len(anthropic_chat.requests) == 2  # the first try and one SDK retry


def test_openai_5xx_then_success_is_retried_by_the_sdk(openai_chat) -> None:  # type: ignore[no-untyped-def]
    openai_chat.fail_next(500, openai_error("boom", type_="server_error"), headers={"retry-after": "0"})
    openai_chat.queue("Fine [1].")
    assert _ask("openai").text == "Fine [1]."
    assert len(openai_chat.requests) == 2


def test_provider_timeout_is_a_504_naming_the_provider(openai_chat, settings) -> None:  # type: ignore[no-untyped-def]
    settings.LLM_TIMEOUT_SECONDS = 0.3
    settings.LLM_MAX_RETRIES = 0
    openai_chat.fail_next(200, {}, delay=1.5)
    with pytest.raises(LLMTimeoutError) as caught:
        _ask("openai")
    assert caught.value.status == 504 and "openai" in caught.value.message


def test_extractive_answer_cites_each_sentence_and_says_when_nothing_matches() -> None:
    evidence = [(1, "Acme Corp was founded in 1999 by Ada Lovelace. It sells anvils."), (2, "Globex makes widgets.")]
    answer = extractive_answer(question="Who founded Acme Corp?", evidence=evidence)
    # The short answer first, then the whole sentence holding it, each cited.
    assert answer.startswith("Ada Lovelace [1]. Acme Corp was founded in 1999 by Ada Lovelace [1].")
    refusal = extractive_answer(question="What is the capital of Peru?", evidence=evidence)
    assert refusal.startswith("Your documents don't say what is the capital of Peru.") and refusal != NO_ANSWER
