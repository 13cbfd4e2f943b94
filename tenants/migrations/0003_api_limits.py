"""Per-tenant daily spend cap and per-key rate limit (answering/providers/spend.py, tenants/apikeys.py).

Both NULL by default: NULL means "the setting" (ANSWER_DAILY_SPEND_CAP_USD, API_RATE_LIMIT_PER_KEY),
so a deployment changes every tenant at once and a row overrides only where it must.
"""

from django.db import migrations

SCHEMA = """
ALTER TABLE tenants_tenant ADD COLUMN IF NOT EXISTS daily_spend_cap_usd numeric(12, 6)
    CHECK (daily_spend_cap_usd IS NULL OR daily_spend_cap_usd >= 0);
ALTER TABLE tenants_apikey ADD COLUMN IF NOT EXISTS rate_limit_per_minute integer
    CHECK (rate_limit_per_minute IS NULL OR rate_limit_per_minute >= 0);
"""

REVERSE = """
ALTER TABLE tenants_apikey DROP COLUMN IF EXISTS rate_limit_per_minute;
ALTER TABLE tenants_tenant DROP COLUMN IF EXISTS daily_spend_cap_usd;
"""


class Migration(migrations.Migration):
    dependencies = [("tenants", "0002_ratelimit")]
    operations = [migrations.RunSQL(SCHEMA, reverse_sql=REVERSE)]
