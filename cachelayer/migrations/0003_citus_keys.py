"""tenant_id leads the keys of the answer cache (docs/decisions/0048).

The entry's `UNIQUE (tenant_id, id)` (the target of the reverse index's foreign key) becomes
its primary key; the reverse index is keyed `(tenant_id, entry_id, chunk_id)`. Citus refuses a
key without the distribution column; every statement on these tables names its tenant.
"""

from django.db import migrations

FORWARD = """
ALTER TABLE cachelayer_entry_chunk DROP CONSTRAINT cachelayer_entry_chunk_tenant_id_entry_id_fkey,
    DROP CONSTRAINT cachelayer_entry_chunk_pkey,
    ADD CONSTRAINT cachelayer_entry_chunk_pkey PRIMARY KEY (tenant_id, entry_id, chunk_id);
ALTER TABLE cachelayer_entry DROP CONSTRAINT cachelayer_entry_tenant_id_uniq,
    DROP CONSTRAINT cachelayer_entry_pkey, ADD CONSTRAINT cachelayer_entry_pkey PRIMARY KEY (tenant_id, id);
ALTER TABLE cachelayer_entry_chunk ADD CONSTRAINT cachelayer_entry_chunk_tenant_id_entry_id_fkey
    FOREIGN KEY (tenant_id, entry_id) REFERENCES cachelayer_entry (tenant_id, id) ON DELETE CASCADE;
"""

REVERSE = """
ALTER TABLE cachelayer_entry_chunk DROP CONSTRAINT cachelayer_entry_chunk_tenant_id_entry_id_fkey,
    DROP CONSTRAINT cachelayer_entry_chunk_pkey,
    ADD CONSTRAINT cachelayer_entry_chunk_pkey PRIMARY KEY (entry_id, chunk_id);
ALTER TABLE cachelayer_entry DROP CONSTRAINT cachelayer_entry_pkey, ADD CONSTRAINT cachelayer_entry_pkey PRIMARY KEY (id),
    ADD CONSTRAINT cachelayer_entry_tenant_id_uniq UNIQUE (tenant_id, id);
ALTER TABLE cachelayer_entry_chunk ADD CONSTRAINT cachelayer_entry_chunk_tenant_id_entry_id_fkey
    FOREIGN KEY (tenant_id, entry_id) REFERENCES cachelayer_entry (tenant_id, id) ON DELETE CASCADE;
"""


class Migration(migrations.Migration):
    dependencies = [("cachelayer", "0002_entry_state")]
    operations = [migrations.RunSQL(FORWARD, reverse_sql=REVERSE)]
