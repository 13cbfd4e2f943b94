from django.conf import settings
from django.db import migrations, models
import django.db.models.deletion

SCHEMA = """
CREATE TABLE IF NOT EXISTS corpus_ingestjob (
    id            bigserial PRIMARY KEY,
    tenant_id     bigint NOT NULL REFERENCES tenants_tenant (id) ON DELETE CASCADE,
    status        varchar(16) NOT NULL DEFAULT 'queued'
                  CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
    audience      varchar(63) NOT NULL DEFAULT 'public',
    source_type   varchar(16) NOT NULL DEFAULT 'doc',
    upload_dir    varchar(1000) NOT NULL,
    file_names    jsonb NOT NULL DEFAULT '[]',
    report        jsonb,
    error         text NOT NULL DEFAULT '',
    task_id       varchar(64) NOT NULL DEFAULT '',
    created_by_id integer REFERENCES auth_user (id) ON DELETE SET NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    started_at    timestamptz,
    finished_at   timestamptz
);
CREATE INDEX IF NOT EXISTS corpus_ingestjob_tenant_created_idx ON corpus_ingestjob (tenant_id, created_at DESC);
"""

REVERSE = "DROP TABLE IF EXISTS corpus_ingestjob;"


class Migration(migrations.Migration):
    dependencies = [
        ("corpus", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunSQL(SCHEMA, reverse_sql=REVERSE),
        migrations.CreateModel(
            name="IngestJob",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("status", models.CharField(choices=[("queued", "Queued"), ("running", "Running"),
                                                     ("succeeded", "Succeeded"), ("failed", "Failed")],
                                            default="queued", max_length=16)),
                ("audience", models.CharField(default="public", max_length=63)),
                ("source_type", models.CharField(default="doc", max_length=16)),
                ("upload_dir", models.CharField(max_length=1000)),
                ("file_names", models.JSONField(default=list)),
                ("report", models.JSONField(blank=True, null=True)),
                ("error", models.TextField(blank=True, default="")),
                ("task_id", models.CharField(blank=True, default="", max_length=64)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("started_at", models.DateTimeField(blank=True, null=True)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                ("created_by", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL,
                                                 related_name="+", to=settings.AUTH_USER_MODEL)),
                ("tenant", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="ingest_jobs",
                                             to="tenants.tenant")),
            ],
            options={"db_table": "corpus_ingestjob", "ordering": ["-created_at"], "managed": False},
        ),
    ]
