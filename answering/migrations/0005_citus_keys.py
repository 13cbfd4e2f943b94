"""tenant_id leads every key of the answering tables and of ingest jobs (docs/decisions/0048).

Citus distributes a table by a column only if each primary key and unique constraint holds
it, and joins two distributed tables by a foreign key only if the key pairs their
distribution columns. Here:

- traces, escalations, ingest jobs, pending asks, escalation messages and webhook deliveries
  get `PRIMARY KEY (tenant_id, id)`; the trace's separate `UNIQUE (tenant_id, id)` becomes
  that primary key;
- an escalation is unique per `(tenant_id, trace_id)`;
- the keys from escalations, messages and deliveries into traces, escalations and jobs hold
  `tenant_id` on both sides. The escalation's key into its knowledge job was ON DELETE SET
  NULL; Citus refuses SET NULL on a key holding the distribution column (with or without
  PostgreSQL 15's column list), so it is NO ACTION now and the model says RESTRICT: a job an
  escalation's resolution produced goes only with its tenant, together with the escalation.
"""

from django.db import migrations, models
import django.db.models.deletion

FORWARD = """
ALTER TABLE answering_escalation DROP CONSTRAINT answering_escalation_tenant_id_trace_id_fkey,
    DROP CONSTRAINT answering_escalation_knowledge_job_id_fkey;
ALTER TABLE answering_escalation_message DROP CONSTRAINT answering_escalation_message_escalation_id_fkey;
ALTER TABLE answering_webhook_delivery DROP CONSTRAINT answering_webhook_delivery_escalation_id_fkey,
    DROP CONSTRAINT answering_webhook_delivery_trace_id_fkey;

ALTER TABLE answering_trace DROP CONSTRAINT answering_trace_tenant_id_uniq,
    DROP CONSTRAINT answering_trace_pkey, ADD CONSTRAINT answering_trace_pkey PRIMARY KEY (tenant_id, id);
ALTER TABLE corpus_ingestjob
    DROP CONSTRAINT corpus_ingestjob_pkey, ADD CONSTRAINT corpus_ingestjob_pkey PRIMARY KEY (tenant_id, id);
ALTER TABLE answering_escalation
    DROP CONSTRAINT answering_escalation_pkey, ADD CONSTRAINT answering_escalation_pkey PRIMARY KEY (tenant_id, id),
    DROP CONSTRAINT answering_escalation_trace_id_key,
    ADD CONSTRAINT answering_escalation_trace_id_key UNIQUE (tenant_id, trace_id),
    ADD CONSTRAINT answering_escalation_tenant_id_trace_id_fkey
        FOREIGN KEY (tenant_id, trace_id) REFERENCES answering_trace (tenant_id, id) ON DELETE CASCADE,
    ADD CONSTRAINT answering_escalation_knowledge_job_id_fkey
        FOREIGN KEY (tenant_id, knowledge_job_id) REFERENCES corpus_ingestjob (tenant_id, id);
ALTER TABLE answering_pendingask
    DROP CONSTRAINT answering_pendingask_pkey, ADD CONSTRAINT answering_pendingask_pkey PRIMARY KEY (tenant_id, id);
ALTER TABLE answering_escalation_message
    DROP CONSTRAINT answering_escalation_message_pkey,
    ADD CONSTRAINT answering_escalation_message_pkey PRIMARY KEY (tenant_id, id),
    ADD CONSTRAINT answering_escalation_message_escalation_id_fkey
        FOREIGN KEY (tenant_id, escalation_id) REFERENCES answering_escalation (tenant_id, id) ON DELETE CASCADE;
ALTER TABLE answering_webhook_delivery
    DROP CONSTRAINT answering_webhook_delivery_pkey,
    ADD CONSTRAINT answering_webhook_delivery_pkey PRIMARY KEY (tenant_id, id),
    ADD CONSTRAINT answering_webhook_delivery_escalation_id_fkey
        FOREIGN KEY (tenant_id, escalation_id) REFERENCES answering_escalation (tenant_id, id) ON DELETE CASCADE,
    ADD CONSTRAINT answering_webhook_delivery_trace_id_fkey
        FOREIGN KEY (tenant_id, trace_id) REFERENCES answering_trace (tenant_id, id) ON DELETE CASCADE;
"""

REVERSE = """
ALTER TABLE answering_webhook_delivery DROP CONSTRAINT answering_webhook_delivery_escalation_id_fkey,
    DROP CONSTRAINT answering_webhook_delivery_trace_id_fkey,
    DROP CONSTRAINT answering_webhook_delivery_pkey, ADD CONSTRAINT answering_webhook_delivery_pkey PRIMARY KEY (id);
ALTER TABLE answering_escalation_message DROP CONSTRAINT answering_escalation_message_escalation_id_fkey,
    DROP CONSTRAINT answering_escalation_message_pkey,
    ADD CONSTRAINT answering_escalation_message_pkey PRIMARY KEY (id);
ALTER TABLE answering_pendingask
    DROP CONSTRAINT answering_pendingask_pkey, ADD CONSTRAINT answering_pendingask_pkey PRIMARY KEY (id);
ALTER TABLE answering_escalation DROP CONSTRAINT answering_escalation_tenant_id_trace_id_fkey,
    DROP CONSTRAINT answering_escalation_knowledge_job_id_fkey,
    DROP CONSTRAINT answering_escalation_trace_id_key, ADD CONSTRAINT answering_escalation_trace_id_key UNIQUE (trace_id),
    DROP CONSTRAINT answering_escalation_pkey, ADD CONSTRAINT answering_escalation_pkey PRIMARY KEY (id);
ALTER TABLE corpus_ingestjob
    DROP CONSTRAINT corpus_ingestjob_pkey, ADD CONSTRAINT corpus_ingestjob_pkey PRIMARY KEY (id);
ALTER TABLE answering_trace
    DROP CONSTRAINT answering_trace_pkey, ADD CONSTRAINT answering_trace_pkey PRIMARY KEY (id),
    ADD CONSTRAINT answering_trace_tenant_id_uniq UNIQUE (tenant_id, id);
ALTER TABLE answering_escalation
    ADD CONSTRAINT answering_escalation_tenant_id_trace_id_fkey
        FOREIGN KEY (tenant_id, trace_id) REFERENCES answering_trace (tenant_id, id) ON DELETE CASCADE,
    ADD CONSTRAINT answering_escalation_knowledge_job_id_fkey
        FOREIGN KEY (knowledge_job_id) REFERENCES corpus_ingestjob (id) ON DELETE SET NULL;
ALTER TABLE answering_escalation_message ADD CONSTRAINT answering_escalation_message_escalation_id_fkey
    FOREIGN KEY (escalation_id) REFERENCES answering_escalation (id) ON DELETE CASCADE;
ALTER TABLE answering_webhook_delivery
    ADD CONSTRAINT answering_webhook_delivery_escalation_id_fkey
        FOREIGN KEY (escalation_id) REFERENCES answering_escalation (id) ON DELETE CASCADE,
    ADD CONSTRAINT answering_webhook_delivery_trace_id_fkey
        FOREIGN KEY (trace_id) REFERENCES answering_trace (id) ON DELETE CASCADE;
"""


class Migration(migrations.Migration):
    dependencies = [("answering", "0004_handoff"), ("corpus", "0007_citus_keys")]
    operations = [
        migrations.RunSQL(FORWARD, reverse_sql=REVERSE, state_operations=[
            migrations.AlterField(
                model_name="escalation", name="knowledge_job",
                field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.RESTRICT,
                                        related_name="+", to="corpus.ingestjob"),
            ),
        ]),
    ]
