"""Operator command: create (or reuse) a verified account and optionally print a new API key on the last line."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from exograph.accounts.models import User
from exograph.accounts.services import api_key_create, user_create, user_email_mark_verified
from exograph.core.errors import ExoGraphError


class Command(BaseCommand):
    help = "Create an account (or reuse an existing one); with --api-key print a new key on the last line."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--email", required=True)
        parser.add_argument("--password", default=None, help="Omit for an API-only account (no web login).")
        parser.add_argument("--api-key", action="store_true", help="Issue a new API key and print it last.")
        parser.add_argument("--key-name", default="cli")
        parser.add_argument("--staff", action="store_true", help="Allow Django admin access.")
        parser.add_argument(
            "--credits",
            type=int,
            default=None,
            metavar="N",
            help="A new account starts with exactly N credits, below the signup grant too (one admin_adjust "
            "ledger entry for the difference). An existing account is topped up to N if it has less (credits "
            "are never removed), so re-running it never adds twice.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        email = options["email"].strip().lower()
        try:
            user = User.objects.filter(email__iexact=email).first()
            created = user is None
            if user is None:
                user = user_create(email=email, password=options["password"], email_verified=True)
                self.stdout.write(f"created account {user.email}")
            else:
                self.stdout.write(f"account {user.email} exists; reusing it")
                if not user.email_verified:  # the operator vouches for the address
                    user = user_email_mark_verified(user=user)
            if options["staff"] and not user.is_staff:
                user.is_staff = user.is_superuser = True
                user.save(update_fields=["is_staff", "is_superuser"])
            if options["credits"] is not None:
                from billing.services import credit_balance, credits_set_admin, credits_top_up_admin

                # A new account's starting balance is exactly N; an existing one may hold bought credits.
                set_balance = credits_set_admin if created else credits_top_up_admin
                set_balance(account=user, target=options["credits"], actor=None, note="create_account --credits")
                self.stdout.write(f"balance: {credit_balance(account=user)} credits")
            if options["api_key"]:
                issued = api_key_create(actor=user, name=options["key_name"])
                self.stdout.write(issued.secret)
        except ExoGraphError as exc:
            raise CommandError(f"{exc.message} {exc.hint}".strip()) from exc
