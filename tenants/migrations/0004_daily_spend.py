"""Per-tenant daily provider spend, one row per tenant and UTC day (answering/providers/spend.py).

Every provider call adds its tokens and cost here in one UPSERT, and the cap is checked
against this row before each call (docs/decisions/0037-every-provider-call-is-metered.md).
Summing traces could not be the counter: rewriting, relevance scoring, the contextualizer
and the judge write no trace of their own. The cost column keeps nine decimals, because a
short call costs fractions of a micro-dollar and six would round them away. Row-level
security like the traces': the tenant's own context, or staff of that tenant.
"""

from django.db import migrations

POLICY = """
    tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::bigint
    OR tenant_id = ANY (string_to_array(NULLIF(current_setting('app.staff_tenant_ids', true), ''), ',')::bigint[])
"""

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS tenants_daily_spend (
    tenant_id     bigint NOT NULL REFERENCES tenants_tenant (id) ON DELETE CASCADE,
    day           date NOT NULL,
    calls         integer NOT NULL DEFAULT 0 CHECK (calls >= 0),
    input_tokens  bigint NOT NULL DEFAULT 0 CHECK (input_tokens >= 0),
    output_tokens bigint NOT NULL DEFAULT 0 CHECK (output_tokens >= 0),
    cost_usd      numeric(18, 9) NOT NULL DEFAULT 0 CHECK (cost_usd >= 0),
    by_stage      jsonb NOT NULL DEFAULT '{{}}',
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, day)
);
ALTER TABLE tenants_daily_spend ENABLE ROW LEVEL SECURITY;
ALTER TABLE tenants_daily_spend FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS daily_spend_tenant ON tenants_daily_spend;
CREATE POLICY daily_spend_tenant ON tenants_daily_spend USING ({POLICY}) WITH CHECK ({POLICY});
"""

REVERSE = "DROP TABLE IF EXISTS tenants_daily_spend;"


class Migration(migrations.Migration):
    dependencies = [("tenants", "0003_api_limits")]
    operations = [migrations.RunSQL(SCHEMA, reverse_sql=REVERSE)]
