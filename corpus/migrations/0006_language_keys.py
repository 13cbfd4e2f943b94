"""Keys computed in Python for a language PostgreSQL cannot stem (docs/decisions/0050).

`language_keys` holds a chunk's lemma, stem, folded and prefix keys as a tsvector written at
ingest (corpus/language.py); when present it takes the place of to_tsvector(ts_config,
content) in `tsv`, so BM25, its statistics and the typo vocabulary read it unchanged. NULL,
as for every existing chunk, keeps the expression of 0004 byte for byte.
"""

from importlib import import_module

from django.db import migrations

FORWARD = """
ALTER TABLE corpus_chunk ADD COLUMN IF NOT EXISTS language_keys tsvector;
CREATE OR REPLACE FUNCTION answerdesk_chunk_tsv() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    NEW.tsv := coalesce(NEW.language_keys, to_tsvector(NEW.ts_config, NEW.content))
        || array_to_tsvector(NEW.exact_terms);
    NEW.term_count := answerdesk_term_count(NEW.tsv);
    RETURN NEW;
END
$$;
DROP TRIGGER IF EXISTS corpus_chunk_tsv ON corpus_chunk;
CREATE TRIGGER corpus_chunk_tsv
    BEFORE INSERT OR UPDATE OF content, ts_config, exact_terms, language_keys, tsv, term_count ON corpus_chunk
    FOR EACH ROW EXECUTE FUNCTION answerdesk_chunk_tsv();
"""

# Back to 0004's function and trigger (its forward SQL is idempotent), then the column goes.
REVERSE = import_module("corpus.migrations.0004_tsv_trigger").FORWARD + """
ALTER TABLE corpus_chunk DROP COLUMN IF EXISTS language_keys;
"""


class Migration(migrations.Migration):
    dependencies = [("corpus", "0005_ingestjob_writer_audiences")]
    operations = [migrations.RunSQL(FORWARD, reverse_sql=REVERSE)]
