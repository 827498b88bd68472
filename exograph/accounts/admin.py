from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin

from exograph.accounts.models import ApiKey, User


@admin.register(User)
class UserAdmin(BaseUserAdmin):
    ordering = ["email"]
    list_display = ["email", "is_active", "is_staff", "date_joined"]
    search_fields = ["email"]
    fieldsets = (
        (None, {"fields": ("email", "password")}),
        (
            "Permissions",
            {"fields": ("is_active", "is_staff", "is_superuser", "is_platform", "groups", "user_permissions")},
        ),
        ("Dates", {"fields": ("last_login", "date_joined")}),
    )
    add_fieldsets = ((None, {"classes": ("wide",), "fields": ("email", "password1", "password2")}),)


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ["name", "display_prefix", "user", "created", "last_used_at", "revoked_at"]
    search_fields = ["user__email", "prefix", "name"]
    readonly_fields = ["prefix", "digest", "last_used_at"]
