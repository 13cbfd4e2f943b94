"""The answer cache: exact and semantic lookups after query rewriting, a reverse index from
chunks to the entries built on them, and row-level security like the chunks'."""

from django.db import migrations

TENANT = "tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::bigint"
AUDIENCES = "audience_ids <@ string_to_array(NULLIF(current_setting('app.audience_ids', true), ''), ',')::bigint[]"
STAFF = "tenant_id = ANY (string_to_array(NULLIF(current_setting('app.staff_tenant_ids', true), ''), ',')::bigint[])"

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS cachelayer_entry (
    id                bigserial PRIMARY KEY,
    tenant_id         bigint NOT NULL REFERENCES tenants_tenant (id) ON DELETE CASCADE,
    audience_ids      bigint[] NOT NULL,          -- the asker's audience set, sorted
    generator_key     varchar(300) NOT NULL,      -- which generator (and prompt) wrote it
    query_norm        text NOT NULL,              -- the normalised rewritten query
    query_embedding   vector(384) NOT NULL,
    has_identifier    boolean NOT NULL,           -- such entries are never served semantically
    answer            text NOT NULL,
    sources           jsonb NOT NULL DEFAULT '[]',
    conflict          boolean NOT NULL DEFAULT false,
    generator         varchar(200) NOT NULL DEFAULT '',
    provider          varchar(200) NOT NULL DEFAULT '',
    model             varchar(200) NOT NULL DEFAULT '',
    original_trace_id bigint,
    original_cost_usd numeric(12, 6) NOT NULL DEFAULT 0,
    hits              integer NOT NULL DEFAULT 0,
    created_at        timestamptz NOT NULL DEFAULT now(),
    last_hit_at       timestamptz,
    expires_at        timestamptz NOT NULL,
    CONSTRAINT cachelayer_entry_key_uniq UNIQUE (tenant_id, audience_ids, generator_key, query_norm),
    CONSTRAINT cachelayer_entry_tenant_id_uniq UNIQUE (tenant_id, id)
);
CREATE INDEX IF NOT EXISTS cachelayer_entry_embedding_hnsw ON cachelayer_entry
    USING hnsw (query_embedding vector_cosine_ops);

-- Reverse index: which entries were built on which chunks (the context the generator saw).
CREATE TABLE IF NOT EXISTS cachelayer_entry_chunk (
    tenant_id bigint NOT NULL,
    entry_id  bigint NOT NULL,
    chunk_id  bigint NOT NULL,
    PRIMARY KEY (entry_id, chunk_id),
    FOREIGN KEY (tenant_id, entry_id) REFERENCES cachelayer_entry (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS cachelayer_entry_chunk_chunk_idx ON cachelayer_entry_chunk (tenant_id, chunk_id);

ALTER TABLE cachelayer_entry ENABLE ROW LEVEL SECURITY;
ALTER TABLE cachelayer_entry FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS entry_read ON cachelayer_entry;
DROP POLICY IF EXISTS entry_insert ON cachelayer_entry;
DROP POLICY IF EXISTS entry_update ON cachelayer_entry;
DROP POLICY IF EXISTS entry_delete ON cachelayer_entry;
-- Reading: the asker's tenant, and only entries built for audiences the asker may read.
CREATE POLICY entry_read ON cachelayer_entry FOR SELECT USING (({TENANT} AND {AUDIENCES}) OR {STAFF});
CREATE POLICY entry_insert ON cachelayer_entry FOR INSERT WITH CHECK ({TENANT} AND {AUDIENCES});
CREATE POLICY entry_update ON cachelayer_entry FOR UPDATE USING ({TENANT} AND {AUDIENCES});
-- Invalidation and purges must reach every entry of the tenant, whatever its audiences.
CREATE POLICY entry_delete ON cachelayer_entry FOR DELETE USING ({TENANT} OR {STAFF});

ALTER TABLE cachelayer_entry_chunk ENABLE ROW LEVEL SECURITY;
ALTER TABLE cachelayer_entry_chunk FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS entry_chunk_tenant ON cachelayer_entry_chunk;
CREATE POLICY entry_chunk_tenant ON cachelayer_entry_chunk USING ({TENANT} OR {STAFF}) WITH CHECK ({TENANT});
"""

REVERSE = """
DROP TABLE IF EXISTS cachelayer_entry_chunk;
DROP TABLE IF EXISTS cachelayer_entry;
"""


class Migration(migrations.Migration):
    initial = True
    dependencies = [("tenants", "0001_initial"), ("corpus", "0001_initial")]
    operations = [migrations.RunSQL(SCHEMA, reverse_sql=REVERSE)]
