from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin
from django.db.models import QuerySet
from django.http import HttpRequest

from exograph.accounts.models import ApiKey, User
from exograph.accounts.services import account_delete
from exograph.core.errors import ExoGraphError


@admin.register(User)
class UserAdmin(BaseUserAdmin):
    ordering = ["email"]
    list_display = ["email", "is_active", "is_staff", "date_joined", "email_verified_at"]
    search_fields = ["email"]
    readonly_fields = ["email_verified_at"]  # set by the emailed link (with the signup credits), not by hand
    fieldsets = (
        (None, {"fields": ("email", "password")}),
        (
            "Permissions",
            {"fields": ("is_active", "is_staff", "is_superuser", "is_platform", "groups", "user_permissions")},
        ),
        ("Dates", {"fields": ("last_login", "date_joined", "email_verified_at")}),
    )
    add_fieldsets = ((None, {"classes": ("wide",), "fields": ("email", "password1", "password2")}),)
    actions = ["delete_accounts"]

    @admin.action(description="Delete accounts (graphs un-merged, holds released, ledger kept anonymised)")
    def delete_accounts(self, request: HttpRequest, queryset: QuerySet[User]) -> None:
        deleted = 0
        for user in queryset:
            try:
                account_delete(actor=request.user, user=user)  # type: ignore[arg-type]
            except ExoGraphError as exc:
                self.message_user(request, f"{user.email}: {exc.message}", messages.ERROR)
            else:
                deleted += 1
        if deleted:
            self.message_user(request, f"Deleted {deleted} account(s).", messages.SUCCESS)

    # Django's own delete (the object page and "Delete selected") goes through the same service.
    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        account_delete(actor=request.user, user=obj)  # type: ignore[arg-type]

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[User]) -> None:
        for user in queryset:
            account_delete(actor=request.user, user=user)  # type: ignore[arg-type]


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = [
        "name", "display_prefix", "user", "read_only", "monthly_credit_cap", "created", "last_used_at", "revoked_at",
    ]  # fmt: skip
    list_filter = ["read_only"]
    search_fields = ["user__email", "prefix", "name"]
    readonly_fields = ["prefix", "digest", "last_used_at"]
