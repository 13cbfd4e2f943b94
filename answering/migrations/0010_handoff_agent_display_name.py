"""The name askers see on agents' replies, per tenant (issue 48, item 4; docs/decisions/0105).

answering_handoff_settings gains `agent_display_name` (default 'Support team'): the follow-up
page signs every agent reply with it, never the agent's user name. A tenant without a settings
row has the same default (answering/handoff/config.py).
"""

from django.db import migrations, models

FORWARD = """
ALTER TABLE answering_handoff_settings
    ADD COLUMN IF NOT EXISTS agent_display_name varchar(80) NOT NULL DEFAULT 'Support team'
        CHECK (btrim(agent_display_name) <> '');
"""

REVERSE = "ALTER TABLE answering_handoff_settings DROP COLUMN IF EXISTS agent_display_name;"


class Migration(migrations.Migration):

    dependencies = [("answering", "0009_escalation_article")]

    operations = [
        migrations.RunSQL(FORWARD, reverse_sql=REVERSE, state_operations=[
            migrations.AddField("handoffsettings", "agent_display_name", models.CharField(
                default="Support team", max_length=80,
                help_text="The name askers see on every agent reply (follow-up page), instead of the agent's "
                          "user name.")),
        ]),
    ]
