"""Fake chat-model APIs on 127.0.0.1 speaking the real wire formats, streaming included:

- `FakeOpenAIChatServer`: POST /v1/chat/completions (OpenAI Chat Completions; `stream: true` answers
  server-sent `chat.completion.chunk` events ending in `data: [DONE]`, with a usage chunk when
  `stream_options.include_usage`). The chat, research and LLM-extraction tests all use it: `reply(content,
  status)` queues answers and errors in order, `default` answers when nothing is queued, `bodies` are the
  JSON requests.
- `FakeAnthropicServer`: POST /v1/messages (Anthropic Messages; `stream: true` answers the
  message_start / content_block_* / message_delta / message_stop events).

Both check the API key header, queue the assistant texts a test wants (`queue(text)`; otherwise they
echo the last user message) and can be scripted to fail (`fail_next`, from FakeHTTPServer).
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.fakes.http import FakeHTTPServer, RecordedRequest, Reply
from tests.fakes.openai_server import openai_error


def _sse(events: list[tuple[str | None, Any]]) -> bytes:
    lines: list[str] = []
    for name, data in events:
        if name:
            lines.append(f"event: {name}")
        lines.append("data: " + (data if isinstance(data, str) else json.dumps(data)))
        lines.append("")
    return ("\n".join(lines) + "\n").encode()


def _pieces(text: str) -> list[str]:
    """Split like a tokenizer would: words with their following space."""
    words = text.split(" ")
    return [word + (" " if i < len(words) - 1 else "") for i, word in enumerate(words)]


class _QueuedText(FakeHTTPServer):
    def __init__(self, *, api_key: str) -> None:
        super().__init__()
        self.api_key = api_key
        self.texts: deque[str] = deque()

    def queue(self, *texts: str) -> None:
        self.texts.extend(texts)

    def _text_for(self, messages: list[dict[str, Any]]) -> str:
        if self.texts:
            return self.texts.popleft()
        users = [m for m in messages if m.get("role") == "user"]
        content = users[-1]["content"] if users else ""
        return f"echo: {content if isinstance(content, str) else json.dumps(content)}"[:200]

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [r.json() for r in self.requests if r.method == "POST" and r.body]


class FakeOpenAIChatServer(_QueuedText):
    def __init__(self, *, api_key: str = "sk-test-chat") -> None:
        super().__init__(api_key=api_key)
        self.answers: deque[tuple[int, str]] = deque()
        self.default: tuple[int, str] | None = None  # (status, content) when nothing is queued; None: echo

    def reply(self, content: str, status: int = 200) -> None:
        """Queue one answer, in order (before queue()'s texts): the assistant's content, or an error of status."""
        self.answers.append((status, content))

    def _answer(self, messages: list[dict[str, Any]]) -> tuple[int, str]:
        if self.answers:
            return self.answers.popleft()
        if self.texts or self.default is None:
            return 200, self._text_for(messages)
        return self.default

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def handle(self, request: RecordedRequest) -> Reply:
        if request.path != "/v1/chat/completions" or request.method != "POST":
            return Reply(404, openai_error(f"Invalid URL ({request.method} {request.path})"))
        if request.header("Authorization") != f"Bearer {self.api_key}":
            return Reply(401, openai_error("Incorrect API key provided.", code="invalid_api_key"))
        body = request.json()
        model, messages = body.get("model"), body.get("messages")
        if not isinstance(model, str) or not model or not isinstance(messages, list) or not messages:
            return Reply(400, openai_error("'messages' and 'model' are required."))
        status, text = self._answer(messages)
        if status != 200:
            return Reply(status, openai_error("fake failure", type_="server_error"))
        prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in messages)
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": len(text.split()),
            "total_tokens": prompt_tokens + len(text.split()),
        }
        base = {"id": "chatcmpl-fake", "created": 1_700_000_000, "model": model}
        if not body.get("stream"):
            return Reply(
                200,
                {
                    **base,
                    "object": "chat.completion",
                    "usage": usage,
                    "choices": [
                        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}
                    ],
                },
            )
        chunk = {**base, "object": "chat.completion.chunk"}
        events: list[tuple[str | None, Any]] = [
            (
                None,
                {
                    **chunk,
                    "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}],
                },
            )
        ]
        events += [
            (None, {**chunk, "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
            for piece in _pieces(text)
        ]
        events.append((None, {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append((None, {**chunk, "choices": [], "usage": usage}))
        events.append((None, "[DONE]"))
        return Reply(200, _sse(events), content_type="text/event-stream")


def anthropic_error(status: int, message: str) -> dict[str, Any]:
    kinds = {
        400: "invalid_request_error",
        401: "authentication_error",
        404: "not_found_error",
        429: "rate_limit_error",
        529: "overloaded_error",
    }
    return {"type": "error", "error": {"type": kinds.get(status, "api_error"), "message": message}}


class FakeAnthropicServer(_QueuedText):
    def __init__(self, *, api_key: str = "sk-ant-test") -> None:
        super().__init__(api_key=api_key)

    @property
    def base_url(self) -> str:
        return self.url

    def handle(self, request: RecordedRequest) -> Reply:
        if request.path != "/v1/messages" or request.method != "POST":
            return Reply(404, anthropic_error(404, f"Not found: {request.path}"))
        if self.api_key not in (request.header("x-api-key"), (request.header("Authorization") or "")[7:]):
            return Reply(401, anthropic_error(401, "invalid x-api-key"))
        if not request.header("anthropic-version"):
            return Reply(400, anthropic_error(400, "anthropic-version header is required"))
        body = request.json()
        model, messages, max_tokens = body.get("model"), body.get("messages"), body.get("max_tokens")
        if not isinstance(model, str) or not isinstance(messages, list) or not isinstance(max_tokens, int):
            return Reply(400, anthropic_error(400, "model, messages and max_tokens are required"))
        if any(m.get("role") not in ("user", "assistant") for m in messages) or messages[0].get("role") != "user":
            return Reply(400, anthropic_error(400, "messages: roles must alternate, starting with user"))
        text = self._text_for(messages)
        input_tokens = sum(len(str(m.get("content", "")).split()) for m in messages)
        message = {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": model,
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": len(text.split())},
        }
        if not body.get("stream"):
            return Reply(200, {**message, "content": [{"type": "text", "text": text}]})
        start = {
            **message,
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": 1},
        }
        events: list[tuple[str | None, Any]] = [
            ("message_start", {"type": "message_start", "message": start}),
            (
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            ),
        ]
        events += [
            (
                "content_block_delta",
                {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}},
            )
            for piece in _pieces(text)
        ]
        events += [
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                    "usage": {"output_tokens": len(text.split())},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
        return Reply(200, _sse(events), content_type="text/event-stream")


class SlowSynthesisChatServer(FakeOpenAIChatServer):
    """For research killed mid-session: plans at once; holds the first synthesis request until `release` is set
    (the test kills the worker meanwhile); `syntheses` counts the synthesis requests."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.syntheses = 0

    def handle(self, request: RecordedRequest) -> Reply:
        body: dict[str, Any] = request.json() or {}
        prompt = str((body.get("messages") or [{}])[-1].get("content", ""))
        if "Numbered sources" in prompt:
            self.syntheses += 1
            if self.syntheses == 1:
                self.release.wait(timeout=120)
            self.queue('{"findings": [{"text": "Surface codes protect logical qubits.", "citations": [1]}]}')
        else:
            self.queue("surface code threshold\nlogical qubits")
        return super().handle(request)


@contextmanager
def openai_chat_settings(settings: Any, *, provider: str, retries: int) -> Iterator[FakeOpenAIChatServer]:
    """A FakeOpenAIChatServer with the provider setting (CHAT_PROVIDER, RESEARCH_PROVIDER) "openai", the LLM
    settings pointed at it (models fast-model and strong-model, 2 s timeout) and `retries` SDK retries."""
    with FakeOpenAIChatServer() as server:
        setattr(settings, provider, "openai")
        settings.LLM_BASE_URL = server.base_url
        settings.LLM_API_KEY = server.api_key
        settings.CHAT_SNAP_MODEL = "fast-model"
        settings.CHAT_PONDER_MODEL = "strong-model"
        settings.LLM_TIMEOUT_SECONDS = 2.0
        settings.LLM_MAX_RETRIES = retries
        yield server


class StuckChatServer(FakeOpenAIChatServer):
    """Holds every request until `release` is set (a test kills the web process meanwhile); `asked` is set by the
    first request."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.asked = threading.Event()

    def handle(self, request: RecordedRequest) -> Reply:
        self.asked.set()
        self.release.wait(timeout=120)
        return super().handle(request)
