"""An escalation's knowledge-base article draft (issue 48, item 1; docs/decisions/0104).

answering_escalation gains the article an agent writes from the resolved thread, apart from the
personal reply: `article_question`, `article_answer` and `article_audience` (the audience it
will be published into; '' while there is no draft). Publishing files it as a ticket document
through the upload path and sets `knowledge_job`, as before. No new table: row-level security
and the distribution by tenant_id are the escalation's own.
"""

from django.db import migrations, models

FORWARD = """
ALTER TABLE answering_escalation
    ADD COLUMN IF NOT EXISTS article_question text NOT NULL DEFAULT '',
    ADD COLUMN IF NOT EXISTS article_answer text NOT NULL DEFAULT '',
    ADD COLUMN IF NOT EXISTS article_audience varchar(63) NOT NULL DEFAULT '';
"""

REVERSE = """
ALTER TABLE answering_escalation DROP COLUMN IF EXISTS article_audience, DROP COLUMN IF EXISTS article_answer,
    DROP COLUMN IF EXISTS article_question;
"""


class Migration(migrations.Migration):

    dependencies = [("answering", "0008_notification_state")]

    operations = [
        migrations.RunSQL(FORWARD, reverse_sql=REVERSE, state_operations=[
            migrations.AddField("escalation", "article_question", models.TextField(blank=True, default="")),
            migrations.AddField("escalation", "article_answer", models.TextField(blank=True, default="")),
            migrations.AddField("escalation", "article_audience",
                                models.CharField(blank=True, default="", max_length=63)),
        ]),
    ]
