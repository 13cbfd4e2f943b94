"""Every document records where it came from (issue 19, item 6).

`origin` is how it arrived: an upload (API or admin), the ingest command, a website sync, or
an escalation's resolution. `origin_ref` is the file name, the URL or the escalation it came
from, and `fetched_at` when a website page was last fetched. An ingest job carries the origin
its documents will get (an upload, or an escalation's resolution queued as a ticket). Documents stored before this
migration came from the ingest command or the demo loader, which the default records.
"""

from django.db import migrations

FORWARD = """
ALTER TABLE corpus_document
    ADD COLUMN IF NOT EXISTS origin varchar(16) NOT NULL DEFAULT 'command'
        CHECK (origin IN ('upload', 'command', 'website', 'escalation')),
    ADD COLUMN IF NOT EXISTS origin_ref varchar(2000) NOT NULL DEFAULT '',
    ADD COLUMN IF NOT EXISTS fetched_at timestamptz;
ALTER TABLE corpus_ingestjob
    ADD COLUMN IF NOT EXISTS origin varchar(16) NOT NULL DEFAULT 'upload'
        CHECK (origin IN ('upload', 'command', 'website', 'escalation')),
    ADD COLUMN IF NOT EXISTS origin_ref varchar(2000) NOT NULL DEFAULT '';
"""

REVERSE = """
ALTER TABLE corpus_ingestjob
    DROP COLUMN IF EXISTS origin_ref,
    DROP COLUMN IF EXISTS origin;
ALTER TABLE corpus_document
    DROP COLUMN IF EXISTS fetched_at,
    DROP COLUMN IF EXISTS origin_ref,
    DROP COLUMN IF EXISTS origin;
"""


class Migration(migrations.Migration):
    dependencies = [("corpus", "0008_chunk_encoder")]
    operations = [migrations.RunSQL(FORWARD, reverse_sql=REVERSE)]
