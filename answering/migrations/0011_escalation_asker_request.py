"""An escalation the asker asked for (issue 48 item 2, "talk to a person"): a fourth reason,
`asker_request`, next to the three abstentions. The row is the same (the answer's own trace,
the same follow-up page); only the CHECK constraint on `reason` and Django's choices change.
"""

from django.db import migrations, models

FORWARD = """
ALTER TABLE answering_escalation DROP CONSTRAINT IF EXISTS answering_escalation_reason_check;
ALTER TABLE answering_escalation ADD CONSTRAINT answering_escalation_reason_check
    CHECK (reason IN ('weak_retrieval', 'model_declined', 'providers_failed', 'asker_request'));
"""

# Back to three reasons: the asked-for escalations would break the old constraint, so they go
# (their traces stay, as answered traces).
REVERSE = """
DELETE FROM answering_escalation WHERE reason = 'asker_request';
ALTER TABLE answering_escalation DROP CONSTRAINT IF EXISTS answering_escalation_reason_check;
ALTER TABLE answering_escalation ADD CONSTRAINT answering_escalation_reason_check
    CHECK (reason IN ('weak_retrieval', 'model_declined', 'providers_failed'));
"""


class Migration(migrations.Migration):

    dependencies = [("answering", "0010_handoff_agent_display_name")]

    operations = [
        migrations.RunSQL(FORWARD, reverse_sql=REVERSE, state_operations=[
            migrations.AlterField("escalation", "reason", models.CharField(max_length=32, choices=[
                ("weak_retrieval", "Weak retrieval"), ("model_declined", "Model declined"),
                ("providers_failed", "Every provider failed"),
                ("asker_request", "The asker asked for a person")])),
        ]),
    ]
