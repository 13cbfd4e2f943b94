"""BM25 needs what ts_rank_cd never had: per-chunk lengths and document frequencies over the
asker's visible chunks. Both are kept at ingest, per tenant and audience, behind the same
row-level security as the text (docs/decisions/0008-bm25-in-postgresql.md)."""

from django.db import migrations

POLICY = """
        tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::bigint
        AND audience_id = ANY (string_to_array(NULLIF(current_setting('app.audience_ids', true), ''), ',')::bigint[])
"""

SCHEMA = f"""
-- Number of lexeme occurrences in a tsvector: the BM25 document length.
CREATE OR REPLACE FUNCTION answerdesk_term_count(tsvector) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT coalesce(sum(coalesce(array_length(positions, 1), 1)), 0)::integer FROM unnest($1) $$;

-- The exact key: whole identifiers (`=max_connections`, `=e1042`) extracted at ingest.
ALTER TABLE corpus_chunk ADD COLUMN IF NOT EXISTS exact_terms text[] NOT NULL DEFAULT '{{}}';
DROP INDEX IF EXISTS corpus_chunk_tsv_idx;
ALTER TABLE corpus_chunk DROP COLUMN IF EXISTS tsv;
ALTER TABLE corpus_chunk ADD COLUMN tsv tsvector GENERATED ALWAYS AS
    (to_tsvector(ts_config, content) || array_to_tsvector(exact_terms)) STORED;
ALTER TABLE corpus_chunk ADD COLUMN IF NOT EXISTS term_count integer GENERATED ALWAYS AS
    (answerdesk_term_count(to_tsvector(ts_config, content) || array_to_tsvector(exact_terms))) STORED;
CREATE INDEX IF NOT EXISTS corpus_chunk_tsv_idx ON corpus_chunk USING gin (tsv);

-- Document frequency of each term among live chunks, per tenant and audience. An asker's
-- df is the sum over the audiences they may read. Also the typo-correction vocabulary.
CREATE TABLE IF NOT EXISTS corpus_term_stats (
    tenant_id   bigint NOT NULL,
    audience_id bigint NOT NULL,
    term        text NOT NULL,
    df          integer NOT NULL CHECK (df >= 0),
    PRIMARY KEY (tenant_id, audience_id, term),
    FOREIGN KEY (tenant_id, audience_id) REFERENCES tenants_audience (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS corpus_term_stats_trgm_idx ON corpus_term_stats USING gin (term gin_trgm_ops);

-- Live chunk count and total length per tenant and audience (N and avgdl for BM25).
CREATE TABLE IF NOT EXISTS corpus_audience_stats (
    tenant_id   bigint NOT NULL,
    audience_id bigint NOT NULL,
    chunk_count bigint NOT NULL CHECK (chunk_count >= 0),
    term_total  bigint NOT NULL CHECK (term_total >= 0),
    PRIMARY KEY (tenant_id, audience_id),
    FOREIGN KEY (tenant_id, audience_id) REFERENCES tenants_audience (tenant_id, id) ON DELETE CASCADE
);

ALTER TABLE corpus_term_stats ENABLE ROW LEVEL SECURITY;
ALTER TABLE corpus_term_stats FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS term_stats_visibility ON corpus_term_stats;
CREATE POLICY term_stats_visibility ON corpus_term_stats USING ({POLICY}) WITH CHECK ({POLICY});
ALTER TABLE corpus_audience_stats ENABLE ROW LEVEL SECURITY;
ALTER TABLE corpus_audience_stats FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS audience_stats_visibility ON corpus_audience_stats;
CREATE POLICY audience_stats_visibility ON corpus_audience_stats USING ({POLICY}) WITH CHECK ({POLICY});

-- Statistics for chunks that already exist. The owner obeys RLS only while it is FORCEd, so
-- the backfill lifts FORCE inside this transaction and restores it before commit.
ALTER TABLE corpus_chunk NO FORCE ROW LEVEL SECURITY;
ALTER TABLE corpus_term_stats NO FORCE ROW LEVEL SECURITY;
ALTER TABLE corpus_audience_stats NO FORCE ROW LEVEL SECURITY;
INSERT INTO corpus_term_stats (tenant_id, audience_id, term, df)
SELECT c.tenant_id, c.audience_id, u.lexeme, count(*)
FROM corpus_chunk c, unnest(c.tsv) AS u WHERE NOT c.archived GROUP BY 1, 2, 3
ON CONFLICT DO NOTHING;
INSERT INTO corpus_audience_stats (tenant_id, audience_id, chunk_count, term_total)
SELECT c.tenant_id, c.audience_id, count(*), coalesce(sum(c.term_count), 0)
FROM corpus_chunk c WHERE NOT c.archived GROUP BY 1, 2
ON CONFLICT DO NOTHING;
ALTER TABLE corpus_chunk FORCE ROW LEVEL SECURITY;
ALTER TABLE corpus_term_stats FORCE ROW LEVEL SECURITY;
ALTER TABLE corpus_audience_stats FORCE ROW LEVEL SECURITY;
"""

REVERSE = """
DROP TABLE IF EXISTS corpus_audience_stats;
DROP TABLE IF EXISTS corpus_term_stats;
DROP INDEX IF EXISTS corpus_chunk_tsv_idx;
ALTER TABLE corpus_chunk DROP COLUMN IF EXISTS term_count;
ALTER TABLE corpus_chunk DROP COLUMN IF EXISTS tsv;
ALTER TABLE corpus_chunk DROP COLUMN IF EXISTS exact_terms;
ALTER TABLE corpus_chunk ADD COLUMN tsv tsvector GENERATED ALWAYS AS (to_tsvector(ts_config, content)) STORED;
CREATE INDEX IF NOT EXISTS corpus_chunk_tsv_idx ON corpus_chunk USING gin (tsv);
DROP FUNCTION IF EXISTS answerdesk_term_count(tsvector);
"""


class Migration(migrations.Migration):
    dependencies = [("corpus", "0002_ingestjob")]
    operations = [migrations.RunSQL(SCHEMA, reverse_sql=REVERSE)]
