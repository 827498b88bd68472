"""Account reads: a user's API keys. (The dashboard's reads across the features are exograph.home.selectors.)"""

from __future__ import annotations

from django.db.models import QuerySet

from exograph.accounts.models import ApiKey, User


def api_key_list_for_user(*, user: User) -> QuerySet[ApiKey]:
    return ApiKey.objects.filter(user=user).order_by("revoked_at", "-created")
