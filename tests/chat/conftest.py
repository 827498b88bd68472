"""Chat test helpers: graph fixtures from tests/graphs, funding, fake LLM servers wired into settings."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from exograph.core.scope import Scope
from exograph.graphs.services import graph_create
from tests.fakes.llm_chat import FakeAnthropicServer, FakeOpenAIChatServer, openai_chat_settings
from tests.graphs.conftest import (  # noqa: F401 - fixtures
    QUANTUM_ENTITIES,
    QUANTUM_RELATIONS,
    QUANTUM_TEXTS,
    _drop_graph_stores,
    write_doc,
)


@pytest.fixture
def alice_graph(alice, write_doc):  # type: ignore[no-untyped-def]  # noqa: F811 (the fixture)
    """alice's private graph "Quantum notes" with one document on quantum computing (tests/graphs QUANTUM_*)."""
    graph = graph_create(actor=alice, name="Quantum notes", scope=Scope.PRIVATE)
    write_doc(
        graph,
        alice,
        texts=QUANTUM_TEXTS,
        entities=QUANTUM_ENTITIES,
        relations=QUANTUM_RELATIONS,
        filename="quantum.pdf",
    )
    return graph


@pytest.fixture
def openai_chat(settings) -> Iterator[FakeOpenAIChatServer]:  # type: ignore[no-untyped-def]
    """CHAT_PROVIDER=openai against a loopback Chat Completions fake."""
    with openai_chat_settings(settings, provider="CHAT_PROVIDER", retries=1) as server:
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
