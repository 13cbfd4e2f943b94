"""Escalations move open → claimed → resolved; a resolution can feed an ingest job.

`in_progress` becomes `claimed` (existing rows are migrated). `claimed_at` records when an
agent took the escalation; `knowledge_job_id` the ingest job that turned its resolution into
a ticket document (docs/decisions/0019-escalation-queue-and-resolutions-as-tickets.md).
"""

from django.db import migrations, models
import django.db.models.deletion

# Row-level security is FORCED, so even the owner running this migration sees no rows until
# the staff setting admits every tenant for this transaction.
ADMIT_ALL = """
SELECT set_config('app.staff_tenant_ids',
                  coalesce((SELECT string_agg(id::text, ',') FROM tenants_tenant), ''), true);
"""

FORWARD = ADMIT_ALL + """
ALTER TABLE answering_escalation DROP CONSTRAINT IF EXISTS answering_escalation_status_check;
UPDATE answering_escalation SET status = 'claimed' WHERE status = 'in_progress';
ALTER TABLE answering_escalation ADD CONSTRAINT answering_escalation_status_check
    CHECK (status IN ('open', 'claimed', 'resolved'));
ALTER TABLE answering_escalation ADD COLUMN IF NOT EXISTS claimed_at timestamptz;
ALTER TABLE answering_escalation ADD COLUMN IF NOT EXISTS knowledge_job_id bigint
    REFERENCES corpus_ingestjob (id) ON DELETE SET NULL;
SELECT set_config('app.staff_tenant_ids', '', true);
"""

REVERSE = ADMIT_ALL + """
ALTER TABLE answering_escalation DROP COLUMN IF EXISTS knowledge_job_id;
ALTER TABLE answering_escalation DROP COLUMN IF EXISTS claimed_at;
ALTER TABLE answering_escalation DROP CONSTRAINT IF EXISTS answering_escalation_status_check;
UPDATE answering_escalation SET status = 'in_progress' WHERE status = 'claimed';
ALTER TABLE answering_escalation ADD CONSTRAINT answering_escalation_status_check
    CHECK (status IN ('open', 'in_progress', 'resolved'));
SELECT set_config('app.staff_tenant_ids', '', true);
"""


class Migration(migrations.Migration):

    dependencies = [
        ("answering", "0001_initial"),
        ("corpus", "0002_ingestjob"),
    ]

    operations = [
        migrations.RunSQL(FORWARD, reverse_sql=REVERSE),
        migrations.AlterField(
            model_name="escalation",
            name="status",
            field=models.CharField(choices=[("open", "Open"), ("claimed", "Claimed"), ("resolved", "Resolved")],
                                   default="open", max_length=16),
        ),
        migrations.AddField(
            model_name="escalation",
            name="claimed_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="escalation",
            name="knowledge_job",
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL,
                                    related_name="+", to="corpus.ingestjob"),
        ),
    ]
