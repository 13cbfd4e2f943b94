"""Website sync (issue 19 item 3, docs/decisions/0055): a tenant's web sources and their pages.

- corpus_websource: a start URL or a sitemap, the audience its pages are written into,
  include/exclude path patterns, a page limit, a schedule (daily, weekly, manual), when the
  next scheduled run is due, and the last run's status and report.
- corpus_webpage: one row per URL a source fetched or refused, with the validators of the
  last fetch (ETag, Last-Modified) for a conditional request next time, the canonical URL (the
  document's identity) and the document it wrote; status and last error say what happened.

tenant_id leads every key, foreign keys between tenant tables pair it (docs/decisions/0048),
and row-level security admits the tenant's own context or its staff, like the handoff tables.
A page's document goes with the document (CASCADE: Citus refuses SET NULL on a key holding
tenant_id); the next sync then fetches the page as new.
"""

from django.conf import settings
from django.db import migrations, models
import django.db.models.deletion

POLICY = """
    tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::bigint
    OR tenant_id = ANY (string_to_array(NULLIF(current_setting('app.staff_tenant_ids', true), ''), ',')::bigint[])
"""

ADMIT_ALL = """
SELECT set_config('app.staff_tenant_ids',
                  coalesce((SELECT string_agg(id::text, ',') FROM tenants_tenant), ''), true);
"""


def _rls(table: str, policy: str) -> str:
    return f"""
ALTER TABLE {table} ENABLE ROW LEVEL SECURITY;
ALTER TABLE {table} FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS {policy} ON {table};
CREATE POLICY {policy} ON {table} USING ({POLICY}) WITH CHECK ({POLICY});
"""


FORWARD = ADMIT_ALL + """
CREATE TABLE IF NOT EXISTS corpus_websource (
    id               bigserial NOT NULL,
    tenant_id        bigint NOT NULL REFERENCES tenants_tenant (id) ON DELETE CASCADE,
    audience_id      bigint NOT NULL,
    name             varchar(200) NOT NULL DEFAULT '',
    start_url        varchar(2000) NOT NULL,
    kind             varchar(8) NOT NULL DEFAULT 'start' CHECK (kind IN ('start', 'sitemap')),
    include_patterns text NOT NULL DEFAULT '',
    exclude_patterns text NOT NULL DEFAULT '',
    page_limit       integer NOT NULL DEFAULT 200 CHECK (page_limit BETWEEN 1 AND 100000),
    schedule         varchar(8) NOT NULL DEFAULT 'manual' CHECK (schedule IN ('daily', 'weekly', 'manual')),
    next_run_at      timestamptz,
    last_status      varchar(16) NOT NULL DEFAULT 'never'
                     CHECK (last_status IN ('never', 'queued', 'running', 'succeeded', 'failed')),
    last_run_at      timestamptz,
    last_report      jsonb,
    last_error       text NOT NULL DEFAULT '',
    created_by_id    integer REFERENCES auth_user (id) ON DELETE SET NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, audience_id) REFERENCES tenants_audience (tenant_id, id)
);

CREATE TABLE IF NOT EXISTS corpus_webpage (
    id            bigserial NOT NULL,
    tenant_id     bigint NOT NULL REFERENCES tenants_tenant (id) ON DELETE CASCADE,
    source_id     bigint NOT NULL,
    url           varchar(2000) NOT NULL,
    canonical_url varchar(2000) NOT NULL DEFAULT '',
    etag          varchar(500) NOT NULL DEFAULT '',
    last_modified varchar(100) NOT NULL DEFAULT '',
    document_id   bigint,
    status        varchar(16) NOT NULL DEFAULT 'new'
                  CHECK (status IN ('new', 'ingested', 'unchanged', 'skipped', 'error', 'gone', 'duplicate')),
    http_status   integer,
    last_error    text NOT NULL DEFAULT '',
    -- Same-host links of the last good fetch: followed again when the page answers 304.
    links         jsonb NOT NULL DEFAULT '[]',
    fetched_at    timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    CONSTRAINT corpus_webpage_source_url_uniq UNIQUE (tenant_id, source_id, url),
    FOREIGN KEY (tenant_id, source_id) REFERENCES corpus_websource (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, document_id) REFERENCES corpus_document (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS corpus_webpage_document_idx ON corpus_webpage (tenant_id, document_id)
    WHERE document_id IS NOT NULL;
""" + _rls("corpus_websource", "websource_tenant") + _rls("corpus_webpage", "webpage_tenant") + """
SELECT set_config('app.staff_tenant_ids', '', true);
"""

REVERSE = """
DROP TABLE IF EXISTS corpus_webpage;
DROP TABLE IF EXISTS corpus_websource;
"""


class Migration(migrations.Migration):
    dependencies = [
        ("corpus", "0009_document_origin"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunSQL(FORWARD, reverse_sql=REVERSE),
        migrations.CreateModel(
            name="WebSource",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(blank=True, default="", max_length=200)),
                ("start_url", models.CharField(max_length=2000)),
                ("kind", models.CharField(default="start", max_length=8)),
                ("include_patterns", models.TextField(blank=True, default="")),
                ("exclude_patterns", models.TextField(blank=True, default="")),
                ("page_limit", models.IntegerField(default=200)),
                ("schedule", models.CharField(default="manual", max_length=8)),
                ("next_run_at", models.DateTimeField(blank=True, null=True)),
                ("last_status", models.CharField(default="never", max_length=16)),
                ("last_run_at", models.DateTimeField(blank=True, null=True)),
                ("last_report", models.JSONField(blank=True, null=True)),
                ("last_error", models.TextField(blank=True, default="")),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("tenant", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="web_sources",
                                             to="tenants.tenant")),
                ("audience", models.ForeignKey(on_delete=django.db.models.deletion.RESTRICT, related_name="+",
                                               to="tenants.audience")),
                ("created_by", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL,
                                                 related_name="+", to=settings.AUTH_USER_MODEL)),
            ],
            options={"db_table": "corpus_websource", "ordering": ["-created_at"], "managed": False},
        ),
        migrations.CreateModel(
            name="WebPage",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("url", models.CharField(max_length=2000)),
                ("canonical_url", models.CharField(blank=True, default="", max_length=2000)),
                ("etag", models.CharField(blank=True, default="", max_length=500)),
                ("last_modified", models.CharField(blank=True, default="", max_length=100)),
                ("status", models.CharField(default="new", max_length=16)),
                ("http_status", models.IntegerField(blank=True, null=True)),
                ("last_error", models.TextField(blank=True, default="")),
                ("links", models.JSONField(default=list)),
                ("fetched_at", models.DateTimeField(blank=True, null=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("tenant", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+",
                                             to="tenants.tenant")),
                ("source", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="pages",
                                             to="corpus.websource")),
                ("document", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE,
                                               related_name="+", to="corpus.document")),
            ],
            options={"db_table": "corpus_webpage", "ordering": ["url"], "managed": False,
                     "constraints": [models.UniqueConstraint(fields=["tenant", "source", "url"],
                                                             name="corpus_webpage_source_url_uniq")]},
        ),
    ]
