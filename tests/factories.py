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
