"""Every chunk records the encoder that wrote its vector (docs/decisions/0047).

`encoder` is the model and the runtime ("all-MiniLM-L6-v2:onnx-int8"): vectors of two
runtimes of the same weights agree to a cosine of about 0.99, not exactly, and a tenant whose
chunks came from two of them would rank by a mixture. Ingest refuses to add vectors of another
encoder to a tenant; `manage.py reembed` rewrites a tenant's vectors in place. Every chunk
stored before this migration was encoded by PyTorch, which the default records.
"""

from django.db import migrations

FORWARD = """
ALTER TABLE corpus_chunk ADD COLUMN IF NOT EXISTS encoder varchar(200) NOT NULL DEFAULT 'all-MiniLM-L6-v2:torch';
CREATE INDEX IF NOT EXISTS corpus_chunk_tenant_encoder_idx ON corpus_chunk (tenant_id, encoder);
"""

REVERSE = """
DROP INDEX IF EXISTS corpus_chunk_tenant_encoder_idx;
ALTER TABLE corpus_chunk DROP COLUMN IF EXISTS encoder;
"""


class Migration(migrations.Migration):
    dependencies = [("corpus", "0007_citus_keys")]
    operations = [migrations.RunSQL(FORWARD, reverse_sql=REVERSE)]
