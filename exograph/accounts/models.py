from __future__ import annotations

from typing import Any, ClassVar

from django.contrib.auth.models import AbstractUser, BaseUserManager
from django.db import models
from django.db.models.functions import Lower

from exograph.core.models import TimeStampedModel


class UserManager(BaseUserManager["User"]):
    use_in_migrations = True

    def _create(self, email: str, password: str | None, **extra: Any) -> User:
        if not email:
            raise ValueError("An email address is required.")
        user = self.model(email=self.normalize_email(email).lower(), **extra)
        user.set_password(password)
        user.save(using=self._db)
        return user

    def create_user(self, email: str, password: str | None = None, **extra: Any) -> User:
        extra.setdefault("is_staff", False)
        extra.setdefault("is_superuser", False)
        return self._create(email, password, **extra)

    def create_superuser(self, email: str, password: str | None = None, **extra: Any) -> User:
        extra.update(is_staff=True, is_superuser=True)
        return self._create(email, password, **extra)


class User(AbstractUser):
    """An ExoGraph account. People sign in with their email; agents use API keys."""

    username = None  # type: ignore[assignment]
    email = models.EmailField("email address", unique=True)
    # Platform accounts own the world graph; they never log in.
    is_platform = models.BooleanField(default=False)
    # When the owner opened the link sent to this address; the signup credits are granted then.
    email_verified_at = models.DateTimeField(null=True, blank=True)

    USERNAME_FIELD = "email"
    REQUIRED_FIELDS: ClassVar[list[str]] = []

    objects: ClassVar[UserManager] = UserManager()  # type: ignore[assignment]

    class Meta:
        constraints = [models.UniqueConstraint(Lower("email"), name="accounts_user_email_ci_unique")]

    def __str__(self) -> str:
        return self.email

    @property
    def email_verified(self) -> bool:
        return self.email_verified_at is not None


MAX_MONTHLY_CREDIT_CAP = 10_000_000


class ApiKey(TimeStampedModel):
    """An API key. Only a SHA-256 digest of the secret is stored; the prefix identifies it.

    A key may be restricted, for agents: `read_only` (search, explore and list; every write is refused
    by accounts.permissions.ApiKeyPermission) and `monthly_credit_cap` (what requests made with it may
    spend per calendar month, UTC; enforced by billing when it charges or holds).
    """

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, unique=True)
    digest = models.CharField(max_length=64)
    read_only = models.BooleanField(default=False)
    monthly_credit_cap = models.PositiveIntegerField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]
        indexes = [models.Index(fields=["user", "revoked_at"])]

    def __str__(self) -> str:
        return f"{self.name} ({self.display_prefix})"

    @property
    def display_prefix(self) -> str:
        return f"exo_{self.prefix}…"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    @property
    def permission(self) -> str:
        """What the key may do, as the API and the web page name it: "read_only" or "full"."""
        return "read_only" if self.read_only else "full"

    @property
    def is_restricted(self) -> bool:
        """Read-only or capped: such a key may not create or change keys (it could lift its own limits)."""
        return self.read_only or self.monthly_credit_cap is not None
