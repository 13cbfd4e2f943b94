"""A tenant may be listed on the front door, and may embed its chat on its own sites (issue 19).

`listed`: the front door (`/`) links to the tenant's chat page. `embed_origins`: the origins
(one per line, `https://help.example.com`) allowed to frame the embedded chat; empty means
nowhere. `embed_secret`: the key a tenant's server signs a signed-in customer's token with;
empty means the embedded chat reads only the public audience. Every existing tenant starts
unlisted and unembeddable: a stranger learns nothing a tenant did not choose to show.
"""

from django.db import migrations

FORWARD = """
ALTER TABLE tenants_tenant
    ADD COLUMN IF NOT EXISTS listed boolean NOT NULL DEFAULT false,
    ADD COLUMN IF NOT EXISTS embed_origins text NOT NULL DEFAULT '',
    ADD COLUMN IF NOT EXISTS embed_secret varchar(128) NOT NULL DEFAULT '';
"""

REVERSE = """
ALTER TABLE tenants_tenant
    DROP COLUMN IF EXISTS embed_secret,
    DROP COLUMN IF EXISTS embed_origins,
    DROP COLUMN IF EXISTS listed;
"""


class Migration(migrations.Migration):
    dependencies = [("tenants", "0005_tenant_language")]
    operations = [migrations.RunSQL(FORWARD, reverse_sql=REVERSE)]
