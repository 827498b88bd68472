"""Django's Redis cache backend, with one Redis client per connection pool instead of one per call.

django.core.cache.backends.redis.RedisCacheClient.get_client builds a new `redis.Redis` for every get, set and
delete (its constructor parses options and builds the response-callback tables: tens to hundreds of microseconds),
and the API-key lookup cache does one get per authenticated request (exograph.accounts.services). A `redis.Redis`
is thread-safe (each command borrows a connection from the pool), so one client per pool serves every call.
settings.CACHES names this backend; everything else is Django's.
"""

from __future__ import annotations

from typing import Any

from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient as DjangoRedisCacheClient


class RedisCacheClient(DjangoRedisCacheClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        # Django's private helpers (not in django-stubs): the pool index and pool its get_client uses.
        index = self._get_connection_pool_index(write)  # type: ignore[attr-defined]
        client = self._clients.get(index)
        if client is None:  # a race builds two; either serves
            pool = self._get_connection_pool(write)  # type: ignore[attr-defined]
            client = self._clients[index] = self._client(connection_pool=pool)  # type: ignore[attr-defined]
        return client


class RedisCache(DjangoRedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = RedisCacheClient
