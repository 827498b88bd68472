"""Chat test helpers: graph fixtures from tests/graphs, funding, fake LLM servers wired into settings."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from billing.services import credits_grant_admin
from exograph.accounts.models import User
from tests.fakes.llm_chat import FakeAnthropicServer, FakeOpenAIChatServer
from tests.graphs.conftest import _drop_graph_stores, write_doc  # noqa: F401 - fixtures


@pytest.fixture
def fund() -> Callable[[User, int], None]:
    def give(user: User, amount: int) -> None:
        credits_grant_admin(account=user, amount=amount, actor=None, note="test funding")

    return give


@pytest.fixture
def openai_chat(settings) -> Iterator[FakeOpenAIChatServer]:  # type: ignore[no-untyped-def]
    """CHAT_PROVIDER=openai against a loopback Chat Completions fake."""
    with FakeOpenAIChatServer() as server:
        settings.CHAT_PROVIDER = "openai"
        settings.LLM_BASE_URL = server.base_url
        settings.LLM_API_KEY = server.api_key
        settings.CHAT_SNAP_MODEL = "fast-model"
        settings.CHAT_PONDER_MODEL = "strong-model"
        settings.LLM_TIMEOUT_SECONDS = 2.0
        settings.LLM_MAX_RETRIES = 1
        yield server


@pytest.fixture
def anthropic_chat(settings) -> Iterator[FakeAnthropicServer]:  # type: ignore[no-untyped-def]
    """CHAT_PROVIDER=anthropic against a loopback Messages API fake."""
    with FakeAnthropicServer() as server:
        settings.CHAT_PROVIDER = "anthropic"
        settings.ANTHROPIC_BASE_URL = server.base_url
        settings.ANTHROPIC_API_KEY = server.api_key
        settings.CHAT_SNAP_MODEL = "claude-fast"
        settings.CHAT_PONDER_MODEL = "claude-strong"
        settings.LLM_TIMEOUT_SECONDS = 2.0
        settings.LLM_MAX_RETRIES = 1
        yield server
