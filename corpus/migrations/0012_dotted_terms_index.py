"""The vocabulary's dotted terms (`django.core.cache.backends.db`, `pg_stat_statements.track`)
indexed on their own, per tenant and audience (docs/decisions/0129).

A question's unknown word is looked up as one part of a dotted term (retrieval/typos.py), by
a regular expression. The planner cannot tell how selective that expression is, so it read
the scope's whole vocabulary through the primary key (16 ms on the PostgreSQL manual's 35,846
terms, in two of five answers); only a tenth to a fifth of a manual's terms hold a dot, and
this index holds just those.
"""

from django.db import migrations

FORWARD = """
CREATE INDEX IF NOT EXISTS corpus_term_stats_dotted_idx ON corpus_term_stats (tenant_id, audience_id, term)
    WHERE term LIKE '%.%' AND left(term, 1) <> '=';
"""

REVERSE = """
DROP INDEX IF EXISTS corpus_term_stats_dotted_idx;
"""


class Migration(migrations.Migration):
    dependencies = [("corpus", "0011_chunk_token_states")]
    operations = [migrations.RunSQL(FORWARD, reverse_sql=REVERSE)]
