"""Questions waiting for their event stream, behind a one-time id (docs/decisions/0034).

The chat page's POST stores the question, the trimmed history and who asked; the stream's
GET claims the row with DELETE ... RETURNING, so each id answers once, and recomputes the
visitor's audiences itself: nothing the browser holds names an audience. Rows live 60 s;
the POST deletes expired ones of its tenant as it inserts.
"""

from django.db import migrations

POLICY = "tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::bigint"

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS answering_pendingask (
    id              varchar(96) PRIMARY KEY,
    tenant_id       bigint NOT NULL REFERENCES tenants_tenant (id) ON DELETE CASCADE,
    user_id         integer REFERENCES auth_user (id) ON DELETE CASCADE,
    question        text NOT NULL,
    history         jsonb NOT NULL DEFAULT '[]',
    conversation_id varchar(64) NOT NULL,
    turn_id         varchar(32) NOT NULL,
    expires_at      timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS answering_pendingask_tenant_expires_idx
    ON answering_pendingask (tenant_id, expires_at);

-- Only the tenant's own chat context reads it: no staff admission, nobody browses these.
ALTER TABLE answering_pendingask ENABLE ROW LEVEL SECURITY;
ALTER TABLE answering_pendingask FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS pendingask_tenant ON answering_pendingask;
CREATE POLICY pendingask_tenant ON answering_pendingask USING ({POLICY}) WITH CHECK ({POLICY});
"""

REVERSE = "DROP TABLE IF EXISTS answering_pendingask;"


class Migration(migrations.Migration):

    dependencies = [
        ("answering", "0002_escalation_claimed"),
    ]

    operations = [
        migrations.RunSQL(SCHEMA, reverse_sql=REVERSE),
    ]
