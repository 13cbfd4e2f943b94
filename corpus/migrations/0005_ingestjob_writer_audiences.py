"""An ingest job remembers the audiences its principal held when it was queued.

The job runs later, on the worker, with no request around it: the audiences the key or the
staff member could write into must travel with the job, or the worker cannot keep a file's
own `audience:` (front matter, a ticket's field) inside them (docs/decisions/0031).
Jobs queued before this migration were checked against their form field only; they keep
exactly that one audience.
"""

from django.db import migrations, models

FORWARD = """
ALTER TABLE corpus_ingestjob ADD COLUMN IF NOT EXISTS writer_audiences jsonb NOT NULL DEFAULT '[]';
UPDATE corpus_ingestjob SET writer_audiences = jsonb_build_array(audience) WHERE writer_audiences = '[]';
"""

REVERSE = "ALTER TABLE corpus_ingestjob DROP COLUMN IF EXISTS writer_audiences;"


class Migration(migrations.Migration):
    dependencies = [("corpus", "0004_tsv_trigger")]

    operations = [
        migrations.RunSQL(
            FORWARD,
            reverse_sql=REVERSE,
            state_operations=[
                migrations.AddField(model_name="ingestjob", name="writer_audiences",
                                    field=models.JSONField(default=list)),
            ],
        ),
    ]
