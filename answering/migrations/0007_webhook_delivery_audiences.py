"""Webhook deliveries carry the audiences of their event (issue 45, docs/decisions/0094).

A delivery quotes an escalation's question and contact or a trace's answer, so the console
filters it like the trace it came from. The column has no default: a delivery written without
its audiences is refused by the database, never shown to everyone. Rows written before this
take their trace's audiences (directly or through the escalation), and a row linked to neither
takes every audience of its tenant, so only a member holding all of them sees it.
"""

from django.db import migrations, models

ADMIT_ALL = """
SELECT set_config('app.staff_tenant_ids',
                  coalesce((SELECT string_agg(id::text, ',') FROM tenants_tenant), ''), true);
"""

FORWARD = ADMIT_ALL + """
ALTER TABLE answering_webhook_delivery ADD COLUMN IF NOT EXISTS audiences jsonb;
UPDATE answering_webhook_delivery d SET audiences = coalesce(
    (SELECT t.audiences FROM answering_trace t WHERE t.tenant_id = d.tenant_id AND t.id = d.trace_id),
    (SELECT t.audiences FROM answering_escalation e
       JOIN answering_trace t ON t.tenant_id = e.tenant_id AND t.id = e.trace_id
      WHERE e.tenant_id = d.tenant_id AND e.id = d.escalation_id),
    (SELECT coalesce(jsonb_agg(a.slug ORDER BY a.slug), '[]'::jsonb) FROM tenants_audience a
      WHERE a.tenant_id = d.tenant_id));
ALTER TABLE answering_webhook_delivery ALTER COLUMN audiences SET NOT NULL;
ALTER TABLE answering_webhook_delivery ADD CONSTRAINT answering_webhook_delivery_audiences_array
    CHECK (jsonb_typeof(audiences) = 'array');
SELECT set_config('app.staff_tenant_ids', '', true);
"""

REVERSE = """
ALTER TABLE answering_webhook_delivery DROP CONSTRAINT IF EXISTS answering_webhook_delivery_audiences_array;
ALTER TABLE answering_webhook_delivery DROP COLUMN IF EXISTS audiences;
"""


class Migration(migrations.Migration):

    dependencies = [
        ("answering", "0006_handoff_model_options"),
        ("tenants", "0007_tenant_shadow_of"),
    ]

    operations = [
        migrations.RunSQL(FORWARD, reverse_sql=REVERSE),
        migrations.AddField("webhookdelivery", "audiences", models.JSONField()),
    ]
