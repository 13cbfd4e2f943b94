# State only (AlterModelOptions of unmanaged mirrors): no SQL runs, so nothing to reverse by hand.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('answering', '0005_citus_keys'),
    ]

    operations = [
        migrations.AlterModelOptions(
            name='handoffsettings',
            options={'managed': False, 'verbose_name': 'handoff settings', 'verbose_name_plural': 'handoff settings'},
        ),
        migrations.AlterModelOptions(
            name='webhookdelivery',
            options={'managed': False, 'ordering': ['-created_at'], 'verbose_name_plural': 'webhook deliveries'},
        ),
    ]
