"""Email verification: accounts made before it existed count as verified (they already had their signup grant)."""

from django.db import migrations, models
from django.db.models import F


def existing_accounts_are_verified(apps, schema_editor):  # type: ignore[no-untyped-def]
    User = apps.get_model("accounts", "User")  # noqa: N806
    User.objects.filter(email_verified_at__isnull=True).update(email_verified_at=F("date_joined"))


class Migration(migrations.Migration):
    dependencies = [("accounts", "0001_initial")]

    operations = [
        migrations.AddField(
            model_name="user",
            name="email_verified_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(existing_accounts_are_verified, migrations.RunPython.noop),
    ]
