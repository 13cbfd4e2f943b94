"""tenant_id leads the keys of documents and chunks, so Citus can distribute them by tenant.

Citus refuses a primary key or unique constraint without the distribution column
(docs/decisions/0048, docs/scaling.md). Documents had both `PRIMARY KEY (id)` and
`UNIQUE (tenant_id, id)` (the target of the composite foreign keys): the unique constraint
becomes the primary key, and the keys that pointed at it point at the primary key. Chunks get
`PRIMARY KEY (tenant_id, id)` and `UNIQUE (tenant_id, document_id, ordinal)`. Every read of
a chunk or document by id also names its tenant (the scope's weld, row-level security), so the
lookups that used `(id)` use `(tenant_id, id)`. Ingest jobs are rekeyed in answering's
migration 0005, which also moves the escalation's key into them.
"""

from django.db import migrations

FORWARD = """
ALTER TABLE corpus_chunk DROP CONSTRAINT corpus_chunk_tenant_id_document_id_fkey;
ALTER TABLE corpus_document DROP CONSTRAINT corpus_document_tenant_id_superseded_by_id_fkey;
ALTER TABLE corpus_document DROP CONSTRAINT corpus_document_tenant_id_uniq;
ALTER TABLE corpus_document DROP CONSTRAINT corpus_document_pkey,
    ADD CONSTRAINT corpus_document_pkey PRIMARY KEY (tenant_id, id);
ALTER TABLE corpus_document ADD CONSTRAINT corpus_document_tenant_id_superseded_by_id_fkey
    FOREIGN KEY (tenant_id, superseded_by_id) REFERENCES corpus_document (tenant_id, id);
ALTER TABLE corpus_chunk DROP CONSTRAINT corpus_chunk_pkey,
    ADD CONSTRAINT corpus_chunk_pkey PRIMARY KEY (tenant_id, id),
    DROP CONSTRAINT corpus_chunk_document_id_ordinal_key,
    ADD CONSTRAINT corpus_chunk_document_id_ordinal_key UNIQUE (tenant_id, document_id, ordinal),
    ADD CONSTRAINT corpus_chunk_tenant_id_document_id_fkey
        FOREIGN KEY (tenant_id, document_id) REFERENCES corpus_document (tenant_id, id) ON DELETE CASCADE;
"""

REVERSE = """
ALTER TABLE corpus_chunk DROP CONSTRAINT corpus_chunk_tenant_id_document_id_fkey,
    DROP CONSTRAINT corpus_chunk_document_id_ordinal_key,
    ADD CONSTRAINT corpus_chunk_document_id_ordinal_key UNIQUE (document_id, ordinal),
    DROP CONSTRAINT corpus_chunk_pkey,
    ADD CONSTRAINT corpus_chunk_pkey PRIMARY KEY (id);
ALTER TABLE corpus_document DROP CONSTRAINT corpus_document_tenant_id_superseded_by_id_fkey;
ALTER TABLE corpus_document DROP CONSTRAINT corpus_document_pkey,
    ADD CONSTRAINT corpus_document_pkey PRIMARY KEY (id),
    ADD CONSTRAINT corpus_document_tenant_id_uniq UNIQUE (tenant_id, id);
ALTER TABLE corpus_document ADD CONSTRAINT corpus_document_tenant_id_superseded_by_id_fkey
    FOREIGN KEY (tenant_id, superseded_by_id) REFERENCES corpus_document (tenant_id, id);
ALTER TABLE corpus_chunk ADD CONSTRAINT corpus_chunk_tenant_id_document_id_fkey
    FOREIGN KEY (tenant_id, document_id) REFERENCES corpus_document (tenant_id, id) ON DELETE CASCADE;
"""


class Migration(migrations.Migration):
    dependencies = [("corpus", "0006_language_keys")]
    operations = [migrations.RunSQL(FORWARD, reverse_sql=REVERSE)]
