"""Personas and clients shared by every test.

alice: the owner in most stories. bob: another customer who shares world graphs with
alice. charlie: an outsider who must never see alice's private things.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator

import pytest
import redis
from django.apps import apps as django_apps
from django.conf import settings
from django.core.cache import cache
from falkordb import FalkorDB
from rest_framework.test import APIClient

from billing.services import credits_grant_admin
from exograph.accounts.models import User
from exograph.accounts.services import api_key_create
from exograph.core.falkor import falkordb_client
from tests.factories import UserFactory, graph_stores_drop
from tests.fakes.openai_server import FakeOpenAIServer
from tests.workers import short_tmp, start_worker  # noqa: F401 (fixtures: real Celery workers, tests/workers.py)

PASSWORD = "correct-horse-battery-staple"


@pytest.fixture(autouse=True)
def _fast_hashing_and_clean_redis(settings) -> Iterator[None]:  # type: ignore[no-untyped-def]
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    cache.clear()
    limits = redis.Redis.from_url(settings.RATELIMIT_REDIS_URL)
    limits.flushdb()
    limits.close()
    yield


@pytest.fixture(autouse=True)
def _world_graph_row(request: pytest.FixtureRequest) -> None:
    """The platform account and the World Graph row, as migration graphs 0002 leaves them. A transactional test's
    flush empties every table; pytest-django runs those tests last, but under pytest-xdist (`make test` runs -n 2)
    a worker may take a module of them before another module's tests."""
    if request.node.get_closest_marker("django_db") is None and not {"db", "transactional_db"} & set(
        request.fixturenames
    ):
        return
    request.getfixturevalue("_django_db_helper")
    importlib.import_module("exograph.graphs.migrations.0002_world_graph").create_world(django_apps, None)


@pytest.fixture
def drop_graph_stores(db) -> Iterator[None]:  # type: ignore[no-untyped-def]
    """Every graph's FalkorDB store (the World Graph's included) dropped after the test. tests/graphs and tests/chat
    use it for every test; another module opts in with `pytest.mark.usefixtures("drop_graph_stores")`."""
    yield
    graph_stores_drop()


@pytest.fixture
def fund() -> Callable[[User, int], None]:
    """fund(user, amount): an admin grant of credits."""

    def give(user: User, amount: int) -> None:
        credits_grant_admin(account=user, amount=amount, actor=None, note="test funding")

    return give


@pytest.fixture
def alice(db) -> User:  # type: ignore[no-untyped-def]
    return UserFactory(email="alice@example.com")


@pytest.fixture
def bob(db) -> User:  # type: ignore[no-untyped-def]
    return UserFactory(email="bob@example.com")


@pytest.fixture
def charlie(db) -> User:  # type: ignore[no-untyped-def]
    return UserFactory(email="charlie@example.com")


@pytest.fixture
def api_key_for(db) -> Callable[[User], str]:  # type: ignore[no-untyped-def]
    def make(user: User) -> str:
        return api_key_create(actor=user, name="tests").secret

    return make


@pytest.fixture
def alice_key(alice, api_key_for) -> str:  # type: ignore[no-untyped-def]
    return api_key_for(alice)


@pytest.fixture
def bob_key(bob, api_key_for) -> str:  # type: ignore[no-untyped-def]
    return api_key_for(bob)


@pytest.fixture
def charlie_key(charlie, api_key_for) -> str:  # type: ignore[no-untyped-def]
    return api_key_for(charlie)


@pytest.fixture
def api_client_for(api_key_for) -> Callable[[User], APIClient]:  # type: ignore[no-untyped-def]
    """An API client authenticated with a fresh API key of the given account."""

    def make(user: User) -> APIClient:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {api_key_for(user)}")
        return client

    return make


@pytest.fixture
def alice_client(alice, api_client_for) -> APIClient:  # type: ignore[no-untyped-def]
    return api_client_for(alice)


@pytest.fixture
def bob_client(bob, api_client_for) -> APIClient:  # type: ignore[no-untyped-def]
    return api_client_for(bob)


@pytest.fixture
def charlie_client(charlie, api_client_for) -> APIClient:  # type: ignore[no-untyped-def]
    return api_client_for(charlie)


@pytest.fixture
def anon_client() -> APIClient:
    return APIClient()


@pytest.fixture
def falkordb() -> FalkorDB:
    """The FalkorDB client connected to the session's embedded server (see services_plugin)."""
    assert settings.FALKORDB_URL.startswith("unix://")
    return falkordb_client()


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAIServer]:
    """A running fake OpenAI-compatible API on 127.0.0.1 (see tests/fakes/openai_server.py)."""
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
def openai_embeddings(settings, fake_openai: FakeOpenAIServer) -> FakeOpenAIServer:  # type: ignore[no-untyped-def]
    """EMBEDDING_PROVIDER=openai against the fake server (16-dimensional vectors); returns the server."""
    settings.EMBEDDING_PROVIDER = "openai"
    settings.EMBEDDING_OPENAI_BASE_URL = fake_openai.base_url
    settings.EMBEDDING_OPENAI_API_KEY = fake_openai.api_key
    settings.EMBEDDING_OPENAI_MODEL = "text-embedding-3-small"
    settings.EMBEDDING_OPENAI_DIMENSION = fake_openai.dimension
    settings.EMBEDDING_OPENAI_SEND_DIMENSIONS = False
    settings.EMBEDDING_OPENAI_TIMEOUT = 5.0
    return fake_openai
