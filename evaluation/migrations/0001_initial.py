"""Stored evaluation runs: the report of every `manage.py eval`, for the admin to compare."""

from django.db import migrations, models
import django.db.models.deletion

POLICY = """
    tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::bigint
    OR tenant_id = ANY (string_to_array(NULLIF(current_setting('app.staff_tenant_ids', true), ''), ',')::bigint[])
"""

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS evaluation_run (
    id         bigserial PRIMARY KEY,
    tenant_id  bigint NOT NULL REFERENCES tenants_tenant (id) ON DELETE CASCADE,
    golden     varchar(500) NOT NULL,
    arms       jsonb NOT NULL DEFAULT '[]',
    report     jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS evaluation_run_tenant_created_idx ON evaluation_run (tenant_id, created_at DESC);
ALTER TABLE evaluation_run ENABLE ROW LEVEL SECURITY;
ALTER TABLE evaluation_run FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS evaluation_run_tenant ON evaluation_run;
CREATE POLICY evaluation_run_tenant ON evaluation_run USING ({POLICY}) WITH CHECK ({POLICY});
"""

REVERSE = "DROP TABLE IF EXISTS evaluation_run;"


class Migration(migrations.Migration):
    initial = True
    dependencies = [("tenants", "0001_initial")]
    operations = [
        migrations.RunSQL(SCHEMA, reverse_sql=REVERSE),
        migrations.CreateModel(
            name="EvalRun",
            fields=[
                ("id", models.BigAutoField(primary_key=True, serialize=False)),
                ("golden", models.CharField(max_length=500)),
                ("arms", models.JSONField(default=list)),
                ("report", models.JSONField()),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("tenant", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+",
                                             to="tenants.tenant")),
            ],
            options={"db_table": "evaluation_run", "ordering": ["-created_at"], "managed": False},
        ),
    ]
