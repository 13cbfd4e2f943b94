"""An evaluation run is keyed `(tenant_id, id)`, like every tenant table (docs/decisions/0048)."""

from django.db import migrations

FORWARD = """
ALTER TABLE evaluation_run DROP CONSTRAINT evaluation_run_pkey, ADD CONSTRAINT evaluation_run_pkey PRIMARY KEY (tenant_id, id);
"""

REVERSE = """
ALTER TABLE evaluation_run DROP CONSTRAINT evaluation_run_pkey, ADD CONSTRAINT evaluation_run_pkey PRIMARY KEY (id);
"""


class Migration(migrations.Migration):
    dependencies = [("evaluation", "0001_initial")]
    operations = [migrations.RunSQL(FORWARD, reverse_sql=REVERSE)]
