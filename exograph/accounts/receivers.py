"""Keep the API-key cache honest: any change to a key or its account drops its cached entries."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from exograph.accounts.models import ApiKey, User
from exograph.accounts.services import api_key_cache_forget


@receiver([post_save, post_delete], sender=ApiKey)
def _forget_key(sender: type[ApiKey], instance: ApiKey, **kwargs: Any) -> None:
    prefixes = [instance.prefix]
    api_key_cache_forget(prefixes=prefixes)
    # Again after commit: a request between the write and the commit may have re-cached the old row.
    transaction.on_commit(lambda: api_key_cache_forget(prefixes=prefixes))


@receiver(post_save, sender=User)
def _forget_users_keys(sender: type[User], instance: User, **kwargs: Any) -> None:
    prefixes = list(ApiKey.objects.filter(user_id=instance.id).values_list("prefix", flat=True))
    api_key_cache_forget(prefixes=prefixes)
    transaction.on_commit(lambda: api_key_cache_forget(prefixes=prefixes))
