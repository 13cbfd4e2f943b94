"""A tenant's language next to its text-search configuration (docs/decisions/0050).

`en` for every existing tenant: their indexes and chat pages stay exactly as they were. A
language PostgreSQL cannot stem (cs) makes ingest and questions compute keys in Python.
"""

from django.db import migrations

FORWARD = "ALTER TABLE tenants_tenant ADD COLUMN IF NOT EXISTS language varchar(16) NOT NULL DEFAULT 'en';"
REVERSE = "ALTER TABLE tenants_tenant DROP COLUMN IF EXISTS language;"


class Migration(migrations.Migration):
    dependencies = [("tenants", "0004_daily_spend")]
    operations = [migrations.RunSQL(FORWARD, reverse_sql=REVERSE)]
