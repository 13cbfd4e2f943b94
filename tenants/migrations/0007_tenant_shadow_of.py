"""An evaluation shadow names the tenant it copies (docs/decisions/0070).

A shadow (`<slug>--<arm>`, evaluation.shadow) holds the same documents as its tenant, indexed
under an arm's settings. The column lets `reembed --all` leave a shadow's own encoder alone.
Shadows built before this column are found by the slug and name evaluation.shadow has always
given them.
"""

from django.db import migrations

FORWARD = """
ALTER TABLE tenants_tenant
    ADD COLUMN IF NOT EXISTS shadow_of_id bigint NULL REFERENCES tenants_tenant (id) ON DELETE CASCADE;
CREATE INDEX IF NOT EXISTS tenants_tenant_shadow_of_idx ON tenants_tenant (shadow_of_id) WHERE shadow_of_id IS NOT NULL;
UPDATE tenants_tenant AS shadow SET shadow_of_id = live.id
  FROM tenants_tenant AS live
 WHERE shadow.shadow_of_id IS NULL
   AND shadow.slug LIKE live.slug || '--%'
   AND position('--' IN substr(shadow.slug, length(live.slug) + 3)) = 0
   AND shadow.name LIKE '%(evaluation shadow: %';
"""

REVERSE = """
DROP INDEX IF EXISTS tenants_tenant_shadow_of_idx;
ALTER TABLE tenants_tenant DROP COLUMN IF EXISTS shadow_of_id;
"""


class Migration(migrations.Migration):
    dependencies = [("tenants", "0006_tenant_front_door_and_embed")]
    operations = [migrations.RunSQL(FORWARD, reverse_sql=REVERSE)]
