from __future__ import annotations

from django.db.models import QuerySet

from billing.models import CreditEntry, EntryKind
from exograph.accounts.models import ApiKey, User


def api_key_list_for_user(*, user: User) -> QuerySet[ApiKey]:
    return ApiKey.objects.filter(user=user).order_by("revoked_at", "-created")


def user_signup_credits_received(*, user: User) -> bool:
    """Whether user's account got the signup grant (it is once per email address: billing.credits_grant_signup)."""
    return CreditEntry.objects.filter(account__user=user, kind=EntryKind.SIGNUP_GRANT).exists()
