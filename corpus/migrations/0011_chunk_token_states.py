"""Each chunk may keep its token states for the late-interaction reranker (docs/decisions/0063).

int8 rows (corpus/token_states.py), about 55 kB a chunk: always out of line in TOAST, where no
scan of the heap reads them, and EXTERNAL because rounded unit vectors do not compress, so
pglz would only spend the writer's time finding that out. NULL: not stored (a chunk written
before this migration, a chunk embedded with a context blurb, or INGEST_TOKEN_STATES off);
the reranker then encodes that candidate as before, and `manage.py reembed` fills them in.
"""

from django.db import migrations

FORWARD = """
ALTER TABLE corpus_chunk ADD COLUMN IF NOT EXISTS token_states bytea;
ALTER TABLE corpus_chunk ALTER COLUMN token_states SET STORAGE EXTERNAL;
"""

REVERSE = """
ALTER TABLE corpus_chunk DROP COLUMN IF EXISTS token_states;
"""


class Migration(migrations.Migration):
    dependencies = [("corpus", "0010_websource")]
    operations = [migrations.RunSQL(FORWARD, reverse_sql=REVERSE)]
