"""Each email notification's state, on the row it is about (issue 45, item 5).

- answering_escalation gains the agents' alert: `alert_status` ('' when none is sent one by one,
  pending, sent, failed, skipped when no agent has an address), `alert_attempts`,
  `alert_error` (the last failure) and `alert_next_at` (the next retry, or the lease of the
  attempt under way);
- answering_escalation_message gains the same for the email of an agent's reply to the asker
  (`email_*`).
A partial index per table finds what is due. No new table: row-level security and the
distribution by tenant_id are the rows' own.
"""

from django.db import migrations, models

STATUSES = "('', 'pending', 'sent', 'failed', 'skipped')"

FORWARD = f"""
ALTER TABLE answering_escalation
    ADD COLUMN IF NOT EXISTS alert_status varchar(8) NOT NULL DEFAULT '' CHECK (alert_status IN {STATUSES}),
    ADD COLUMN IF NOT EXISTS alert_attempts integer NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS alert_error varchar(300) NOT NULL DEFAULT '',
    ADD COLUMN IF NOT EXISTS alert_next_at timestamptz;
CREATE INDEX IF NOT EXISTS answering_escalation_alert_due_idx
    ON answering_escalation (tenant_id, alert_next_at) WHERE alert_status = 'pending';
ALTER TABLE answering_escalation_message
    ADD COLUMN IF NOT EXISTS email_status varchar(8) NOT NULL DEFAULT '' CHECK (email_status IN {STATUSES}),
    ADD COLUMN IF NOT EXISTS email_attempts integer NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS email_error varchar(300) NOT NULL DEFAULT '',
    ADD COLUMN IF NOT EXISTS email_next_at timestamptz;
CREATE INDEX IF NOT EXISTS answering_escalation_message_email_due_idx
    ON answering_escalation_message (tenant_id, email_next_at) WHERE email_status = 'pending';
"""

REVERSE = """
DROP INDEX IF EXISTS answering_escalation_message_email_due_idx;
ALTER TABLE answering_escalation_message DROP COLUMN IF EXISTS email_next_at, DROP COLUMN IF EXISTS email_error,
    DROP COLUMN IF EXISTS email_attempts, DROP COLUMN IF EXISTS email_status;
DROP INDEX IF EXISTS answering_escalation_alert_due_idx;
ALTER TABLE answering_escalation DROP COLUMN IF EXISTS alert_next_at, DROP COLUMN IF EXISTS alert_error,
    DROP COLUMN IF EXISTS alert_attempts, DROP COLUMN IF EXISTS alert_status;
"""


CHOICES = [("", "None"), ("pending", "Pending"), ("sent", "Sent"), ("failed", "Failed"),
           ("skipped", "Nobody to send to")]


def _state(prefix: str) -> list[tuple[str, models.Field]]:
    return [(f"{prefix}_status", models.CharField(blank=True, choices=CHOICES, default="", max_length=8)),
            (f"{prefix}_attempts", models.IntegerField(default=0)),
            (f"{prefix}_error", models.CharField(blank=True, default="", max_length=300)),
            (f"{prefix}_next_at", models.DateTimeField(blank=True, null=True))]


class Migration(migrations.Migration):

    dependencies = [("answering", "0007_webhook_delivery_audiences")]

    operations = [
        migrations.RunSQL(FORWARD, reverse_sql=REVERSE, state_operations=[
            *(migrations.AddField("escalation", name, field) for name, field in _state("alert")),
            *(migrations.AddField("escalationmessage", name, field) for name, field in _state("email")),
        ]),
    ]
