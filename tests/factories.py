from __future__ import annotations

import factory
from django.utils import timezone

from exograph.accounts.models import User


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        skip_postgeneration_save = True

    email = factory.Sequence(lambda n: f"user{n}@example.com")
    email_verified_at = factory.LazyFunction(timezone.now)  # the personas are verified customers
    password = factory.PostGenerationMethodCall("set_password", "correct-horse-battery-staple")

    @factory.post_generation
    def _save(obj, create, extracted, **kwargs):  # type: ignore[no-untyped-def]  # noqa: N805
        if create:
            obj.save()


def search_entities(**kwargs):  # type: ignore[no-untyped-def]
    """The hits of graphs.retrieval.entity_search (the read alone: no contributor is paid)."""
    from exograph.graphs.retrieval import entity_search

    return entity_search(**kwargs)["hits"]


def world_graph_row_ensure() -> None:
    """The World Graph row of migration graphs 0002 and its platform owner: a transactional test's flush removes
    them, and a test that runs after one (in CI's order) and writes to the World Graph needs them back."""
    from exograph.graphs.models import WORLD_GRAPH_ID, Graph

    platform, _ = User.objects.get_or_create(
        email="platform@exograph.internal", defaults={"is_platform": True, "is_active": False, "password": "!"}
    )
    Graph.objects.get_or_create(
        id=WORLD_GRAPH_ID, defaults={"name": "World Graph", "owner": platform, "scope": "world", "kind": "world"}
    )


def graph_stores_drop(*, missing_ok: bool = False) -> None:
    """Drop the FalkorDB store of every graph row (the World Graph's included). missing_ok: a test whose store
    server is gone already (a fault test's throwaway one) passes over the stores it cannot reach."""
    from exograph.graphs import store
    from exograph.graphs.models import Graph

    for graph_id in Graph.objects.values_list("id", flat=True):
        try:
            store.store_drop(f"exo:{graph_id}")
        except Exception:
            if not missing_ok:
                raise
