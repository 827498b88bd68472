"""A credit account outlives its user: user becomes nullable (SET_NULL) and a stable anonymous_id names it."""

import uuid

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def fill_anonymous_ids(apps, schema_editor):  # type: ignore[no-untyped-def]
    CreditAccount = apps.get_model("billing", "CreditAccount")  # noqa: N806
    for account in CreditAccount.objects.filter(anonymous_id__isnull=True).only("pk").iterator():
        CreditAccount.objects.filter(pk=account.pk).update(anonymous_id=uuid.uuid4())


class Migration(migrations.Migration):
    dependencies = [
        ("billing", "0003_worldusage"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        # Nullable first, one distinct id per existing row, then unique and required.
        migrations.AddField(
            model_name="creditaccount",
            name="anonymous_id",
            field=models.UUIDField(null=True, editable=False),
        ),
        migrations.RunPython(fill_anonymous_ids, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="creditaccount",
            name="anonymous_id",
            field=models.UUIDField(default=uuid.uuid4, editable=False, unique=True),
        ),
        migrations.AlterField(
            model_name="creditaccount",
            name="user",
            field=models.OneToOneField(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="credit_account",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
    ]
