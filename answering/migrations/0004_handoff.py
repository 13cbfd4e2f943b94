"""The handoff back to the asker (docs/decisions/0044, 0045, 0046).

- answering_escalation gains `public_id` (the opaque follow-up id; existing rows get a random
  one), `contact_email`, `first_reply_at` (time to first reply) and `agents_notified_at`
  (the digest sends each escalation once).
- answering_escalation_message: the thread, asker and agent messages in order.
- answering_handoff_settings: one row per tenant (notification mode, overdue hours,
  retention days, webhook URL and secret); no row means the defaults.
- answering_webhook_delivery: one row per event sent to a tenant's webhook, every attempt
  logged in `attempts`.
Row-level security like the traces': the tenant's own context, or staff of that tenant.
"""

from django.conf import settings
from django.db import migrations, models
import django.db.models.deletion

POLICY = """
    tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::bigint
    OR tenant_id = ANY (string_to_array(NULLIF(current_setting('app.staff_tenant_ids', true), ''), ',')::bigint[])
"""

ADMIT_ALL = """
SELECT set_config('app.staff_tenant_ids',
                  coalesce((SELECT string_agg(id::text, ',') FROM tenants_tenant), ''), true);
"""


def _rls(table: str, policy: str) -> str:
    return f"""
ALTER TABLE {table} ENABLE ROW LEVEL SECURITY;
ALTER TABLE {table} FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS {policy} ON {table};
CREATE POLICY {policy} ON {table} USING ({POLICY}) WITH CHECK ({POLICY});
"""


FORWARD = ADMIT_ALL + """
ALTER TABLE answering_escalation ADD COLUMN IF NOT EXISTS public_id varchar(32);
-- gen_random_uuid() draws from the server's strong random source: 122 unguessable bits.
UPDATE answering_escalation SET public_id = replace(gen_random_uuid()::text, '-', '') WHERE public_id IS NULL;
ALTER TABLE answering_escalation ALTER COLUMN public_id SET NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS answering_escalation_public_idx ON answering_escalation (tenant_id, public_id);
ALTER TABLE answering_escalation ADD COLUMN IF NOT EXISTS contact_email varchar(254) NOT NULL DEFAULT '';
ALTER TABLE answering_escalation ADD COLUMN IF NOT EXISTS first_reply_at timestamptz;
ALTER TABLE answering_escalation ADD COLUMN IF NOT EXISTS agents_notified_at timestamptz;
CREATE INDEX IF NOT EXISTS answering_escalation_tenant_contact_idx
    ON answering_escalation (tenant_id, lower(contact_email)) WHERE contact_email <> '';

CREATE TABLE IF NOT EXISTS answering_escalation_message (
    id            bigserial PRIMARY KEY,
    tenant_id     bigint NOT NULL REFERENCES tenants_tenant (id) ON DELETE CASCADE,
    escalation_id bigint NOT NULL REFERENCES answering_escalation (id) ON DELETE CASCADE,
    author_kind   varchar(8) NOT NULL CHECK (author_kind IN ('asker', 'agent')),
    author_id     integer REFERENCES auth_user (id) ON DELETE SET NULL,
    body          text NOT NULL CHECK (length(body) BETWEEN 1 AND 20000),
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS answering_escalation_message_thread_idx
    ON answering_escalation_message (tenant_id, escalation_id, created_at);

CREATE TABLE IF NOT EXISTS answering_handoff_settings (
    tenant_id      bigint PRIMARY KEY REFERENCES tenants_tenant (id) ON DELETE CASCADE,
    notify_mode    varchar(16) NOT NULL DEFAULT 'each' CHECK (notify_mode IN ('each', 'digest')),
    overdue_hours  integer NOT NULL DEFAULT 24 CHECK (overdue_hours >= 1),
    retention_days integer NOT NULL DEFAULT 90 CHECK (retention_days >= 1),
    webhook_url    varchar(2000) NOT NULL DEFAULT '',
    webhook_secret varchar(128) NOT NULL DEFAULT ''
);

CREATE TABLE IF NOT EXISTS answering_webhook_delivery (
    id              bigserial PRIMARY KEY,
    tenant_id       bigint NOT NULL REFERENCES tenants_tenant (id) ON DELETE CASCADE,
    -- Erasing a person's escalation or trace takes the events that carried their words with it.
    escalation_id   bigint REFERENCES answering_escalation (id) ON DELETE CASCADE,
    trace_id        bigint REFERENCES answering_trace (id) ON DELETE CASCADE,
    event           varchar(40) NOT NULL,
    url             varchar(2000) NOT NULL,
    payload         jsonb NOT NULL,
    status          varchar(16) NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
    attempt_count   integer NOT NULL DEFAULT 0,
    attempts        jsonb NOT NULL DEFAULT '[]',
    next_attempt_at timestamptz,
    delivered_at    timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS answering_webhook_delivery_tenant_created_idx
    ON answering_webhook_delivery (tenant_id, created_at DESC);
""" + _rls("answering_escalation_message", "escalation_message_tenant") \
    + _rls("answering_handoff_settings", "handoff_settings_tenant") \
    + _rls("answering_webhook_delivery", "webhook_delivery_tenant") + """
SELECT set_config('app.staff_tenant_ids', '', true);
"""

REVERSE = ADMIT_ALL + """
DROP TABLE IF EXISTS answering_webhook_delivery;
DROP TABLE IF EXISTS answering_handoff_settings;
DROP TABLE IF EXISTS answering_escalation_message;
DROP INDEX IF EXISTS answering_escalation_tenant_contact_idx;
DROP INDEX IF EXISTS answering_escalation_public_idx;
ALTER TABLE answering_escalation DROP COLUMN IF EXISTS agents_notified_at;
ALTER TABLE answering_escalation DROP COLUMN IF EXISTS first_reply_at;
ALTER TABLE answering_escalation DROP COLUMN IF EXISTS contact_email;
ALTER TABLE answering_escalation DROP COLUMN IF EXISTS public_id;
SELECT set_config('app.staff_tenant_ids', '', true);
"""


class Migration(migrations.Migration):

    dependencies = [
        ("answering", "0003_pending_ask"),
        ("tenants", "0004_daily_spend"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunSQL(FORWARD, reverse_sql=REVERSE),
        migrations.AddField("escalation", "public_id", models.CharField(max_length=32)),
        migrations.AddField("escalation", "contact_email", models.CharField(blank=True, default="", max_length=254)),
        migrations.AddField("escalation", "first_reply_at", models.DateTimeField(blank=True, null=True)),
        migrations.AddField("escalation", "agents_notified_at", models.DateTimeField(blank=True, null=True)),
        migrations.CreateModel(
            name="EscalationMessage",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("author_kind", models.CharField(max_length=8)),
                ("body", models.TextField()),
                ("tenant", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+",
                                             to="tenants.tenant")),
                ("escalation", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE,
                                                 related_name="messages", to="answering.escalation")),
                ("author", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL,
                                             related_name="+", to=settings.AUTH_USER_MODEL)),
            ],
            options={"db_table": "answering_escalation_message", "ordering": ["created_at", "id"], "managed": False},
        ),
        migrations.CreateModel(
            name="HandoffSettings",
            fields=[
                ("tenant", models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True,
                                                related_name="+", serialize=False, to="tenants.tenant")),
                ("notify_mode", models.CharField(default="each", max_length=16)),
                ("overdue_hours", models.IntegerField(default=24)),
                ("retention_days", models.IntegerField(default=90)),
                ("webhook_url", models.CharField(blank=True, default="", max_length=2000)),
                ("webhook_secret", models.CharField(blank=True, default="", max_length=128)),
            ],
            options={"db_table": "answering_handoff_settings", "managed": False},
        ),
        migrations.CreateModel(
            name="WebhookDelivery",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("event", models.CharField(max_length=40)),
                ("url", models.CharField(max_length=2000)),
                ("payload", models.JSONField()),
                ("status", models.CharField(default="pending", max_length=16)),
                ("attempt_count", models.IntegerField(default=0)),
                ("attempts", models.JSONField(default=list)),
                ("next_attempt_at", models.DateTimeField(blank=True, null=True)),
                ("delivered_at", models.DateTimeField(blank=True, null=True)),
                ("tenant", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+",
                                             to="tenants.tenant")),
                ("escalation", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE,
                                                 related_name="+", to="answering.escalation")),
                ("trace", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE,
                                            related_name="+", to="answering.trace")),
            ],
            options={"db_table": "answering_webhook_delivery", "ordering": ["-created_at"], "managed": False},
        ),
    ]
