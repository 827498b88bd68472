"""The cache backend (exograph.core.cache): Django's Redis cache with one client per connection pool."""

from __future__ import annotations

import uuid

from django.core.cache import cache


def test_the_cache_reuses_one_redis_client_per_pool_instead_of_building_one_per_call():
    backend = cache._cache  # type: ignore[attr-defined]
    assert backend.get_client("a") is backend.get_client("b")  # Django's own builds a new redis.Redis each call
    assert backend.get_client("a", write=True) is backend.get_client("b", write=True)


def test_values_round_trip_through_the_shared_client():
    key = f"test-cache-{uuid.uuid4().hex}"
    assert cache.add(key, {"n": 1}, timeout=30) is True
    assert cache.get(key) == {"n": 1}
    cache.set(key, [1, 2], timeout=30)
    assert cache.get(key) == [1, 2]
    cache.delete(key)
    assert cache.get(key) is None
