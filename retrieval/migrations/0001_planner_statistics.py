"""Tell the planner that an audience belongs to one tenant.

Every scoped read filters on tenant_id and on audience_id; without extended statistics the
planner multiplies the two selectivities as if independent (an audience implies its tenant),
then multiplies again by the row-level security policy's own audience check. A 15k-chunk
tenant was estimated at 285 rows, and the typo lookup scanned the tenant's whole vocabulary
instead of using the trigram index (19 ms against 2 ms). docs/decisions/0028.
"""

from django.db import migrations

FORWARD = """
CREATE STATISTICS IF NOT EXISTS corpus_chunk_tenant_audience (dependencies, ndistinct)
    ON tenant_id, audience_id FROM corpus_chunk;
CREATE STATISTICS IF NOT EXISTS corpus_term_stats_tenant_audience (dependencies, ndistinct)
    ON tenant_id, audience_id FROM corpus_term_stats;
ANALYZE corpus_chunk;
ANALYZE corpus_term_stats;
"""

REVERSE = """
DROP STATISTICS IF EXISTS corpus_term_stats_tenant_audience;
DROP STATISTICS IF EXISTS corpus_chunk_tenant_audience;
"""


class Migration(migrations.Migration):
    dependencies = [("corpus", "0003_keyword_statistics")]

    operations = [migrations.RunSQL(FORWARD, reverse_sql=REVERSE)]
