"""Keep a chunk's vector, text and tsvector in its heap row, out of TOAST.

pgvector's type defaults to EXTERNAL storage, and a chunk row (a 1.5 kB vector of 384
floats, ~0.5 kB of text, a ~1 kB tsvector) is over the 2 kB TOAST threshold, so every
vector was moved out of line: an exact scan fetched each one through the TOAST index
(4.5 µs a row, half of it TOAST), and so did every hydration. PLAIN keeps the vector inline;
a toast_tuple_target of 4,080 bytes (the most a heap page allows for two rows) keeps the
tsvector inline too, which the keyword leg reads for every candidate. Existing rows move
when they are next rewritten (VACUUM FULL or re-ingest); new rows are written inline.

The hole, named: PLAIN requires the vector to fit in a heap page, which holds up to about
1,900 dimensions of float4; a larger model needs this reverted to EXTERNAL or halfvec.
docs/decisions/0028.
"""

from django.db import migrations

FORWARD = """
ALTER TABLE corpus_chunk ALTER COLUMN embedding SET STORAGE PLAIN;
ALTER TABLE corpus_chunk SET (toast_tuple_target = 4080);
"""

REVERSE = """
ALTER TABLE corpus_chunk RESET (toast_tuple_target);
ALTER TABLE corpus_chunk ALTER COLUMN embedding SET STORAGE EXTERNAL;
"""


class Migration(migrations.Migration):
    dependencies = [("retrieval", "0001_planner_statistics")]

    operations = [migrations.RunSQL(FORWARD, reverse_sql=REVERSE)]
