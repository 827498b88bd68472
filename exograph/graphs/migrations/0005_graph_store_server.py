from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("graphs", "0004_delete_worldqueryrecord")]

    operations = [
        migrations.AddField(
            model_name="graph",
            name="store_server",
            field=models.CharField(blank=True, default="", max_length=32),
        ),
    ]
