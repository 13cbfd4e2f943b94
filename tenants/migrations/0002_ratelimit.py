"""Fixed-window request counters for rate limits (tenants/ratelimit.py, docs/decisions/0013).

No tenant_id and no row-level security, unlike every other table: a bucket is a counter
keyed by an opaque name (an API key prefix, a client address), the per-address limit runs
before any key is authenticated, and no row holds tenant content.
"""

from django.db import migrations

SCHEMA = """
CREATE TABLE IF NOT EXISTS tenants_ratelimit (
    bucket       varchar(200) NOT NULL,
    window_start timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    hits         integer NOT NULL DEFAULT 0,
    PRIMARY KEY (bucket, window_start)
);
CREATE INDEX IF NOT EXISTS tenants_ratelimit_expires_idx ON tenants_ratelimit (expires_at);
"""

REVERSE = "DROP TABLE IF EXISTS tenants_ratelimit;"


class Migration(migrations.Migration):
    dependencies = [("tenants", "0001_initial")]
    operations = [migrations.RunSQL(SCHEMA, reverse_sql=REVERSE)]
