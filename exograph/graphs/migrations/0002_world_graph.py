"""The platform account and the World Graph row always exist (its FalkorDB store is created on first use)."""

from django.db import migrations

PLATFORM_EMAIL = "platform@exograph.internal"


def create_world(apps, schema_editor):
    User = apps.get_model("accounts", "User")
    Graph = apps.get_model("graphs", "Graph")
    platform, _ = User.objects.get_or_create(
        email=PLATFORM_EMAIL,
        defaults={"is_platform": True, "is_active": False, "password": "!"},  # unusable password: never logs in
    )
    Graph.objects.get_or_create(
        id="world", defaults={"name": "World Graph", "owner": platform, "scope": "world", "kind": "world"}
    )


class Migration(migrations.Migration):
    dependencies = [("graphs", "0001_initial"), ("accounts", "0001_initial")]

    operations = [migrations.RunPython(create_world, migrations.RunPython.noop)]
