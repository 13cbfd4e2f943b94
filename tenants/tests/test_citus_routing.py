"""The Citus rule checker (tenants/citus_routing.py) on planted statements: each kind of violation
is red, and the statements the product writes in their fixed form are green (docs/decisions/0120)."""

from __future__ import annotations

from typing import Any

import pytest

from tenants.citus_routing import Catalog, findings, relations

CATALOG = Catalog(distribution={
    "corpus_chunk": "tenant_id", "corpus_document": "tenant_id", "answering_pendingask": "tenant_id",
    "tenants_daily_spend": "tenant_id", "cachelayer_entry": "tenant_id", "tenants_ratelimit": "bucket",
})


def rules(statement: str) -> list[str]:
    return [str(f) for f in findings(statement=statement, catalog=CATALOG)]


GREEN = [
    # pinned by a parameter, by a constant, by a one-element IN, under a cast
    "SELECT c.id FROM corpus_chunk c WHERE c.tenant_id = $1",
    'SELECT "corpus_chunk"."id" FROM "corpus_chunk" WHERE ("corpus_chunk"."tenant_id" = 7 AND "corpus_chunk"."id" = $1)',
    "SELECT id FROM corpus_chunk WHERE tenant_id IN ($1) AND id = ANY($2)",
    "SELECT id FROM corpus_chunk WHERE tenant_id = $1::bigint",
    # a co-located join, pinned through the chain, USING and a correlated subquery
    "SELECT c.id FROM corpus_chunk c JOIN corpus_document d ON d.id = c.document_id AND d.tenant_id = c.tenant_id "
    "WHERE c.tenant_id = $1",
    "SELECT 1 FROM corpus_chunk JOIN corpus_document USING (tenant_id) WHERE corpus_chunk.tenant_id = $1",
    "SELECT 1 FROM corpus_chunk c WHERE c.tenant_id = $1 AND EXISTS "
    "(SELECT 1 FROM corpus_document d WHERE d.tenant_id = c.tenant_id AND d.id = c.document_id)",
    "SELECT * FROM (SELECT tenant_id, id FROM corpus_chunk WHERE tenant_id = $1) s "
    "JOIN corpus_document d ON d.tenant_id = s.tenant_id",
    # writes naming the tenant; times passed as parameters; STABLE now() without a column
    "INSERT INTO answering_pendingask (id, tenant_id, expires_at) VALUES ($1, $2, clock_timestamp() + $3)",
    "DELETE FROM answering_pendingask WHERE id = $1 AND tenant_id = $2 AND expires_at >= $3 RETURNING question",
    "UPDATE cachelayer_entry SET hits = hits + 1, last_hit_at = now() WHERE tenant_id = $1 AND id = $2",
    "INSERT INTO tenants_daily_spend AS s (tenant_id, day, spent) VALUES ($1, $2, $3) "
    "ON CONFLICT (tenant_id, day) DO UPDATE SET spent = s.spent + EXCLUDED.spent, updated_at = $4",
    "INSERT INTO tenants_ratelimit AS r (bucket, window_start, hits) VALUES ($1, $2, 1) "
    "ON CONFLICT (bucket, window_start) DO UPDATE SET hits = r.hits + 1 RETURNING r.hits",
    "COPY corpus_chunk (tenant_id, id, text) FROM STDIN",
    # no distributed table at all
    "SELECT id FROM tenants_tenant WHERE slug = $1",
    "WITH x AS (DELETE FROM django_session WHERE expire_date < clock_timestamp() RETURNING 1) SELECT count(*) FROM x",
]


@pytest.mark.parametrize("statement", GREEN)
def test_statements_citus_routes_to_one_shard(statement: str) -> None:
    assert rules(statement) == []


RED = {
    # each kind of violation, and the message that names it
    "unrouted": "UPDATE corpus_chunk SET archived = true WHERE id = $1",
    "unrouted under OR": "SELECT id FROM corpus_chunk c WHERE c.tenant_id = $1 OR c.id = $2",
    "unrouted by a set": "SELECT id FROM corpus_chunk WHERE tenant_id = ANY($1)",
    "unrouted by a subquery": "SELECT id FROM corpus_chunk WHERE tenant_id = (SELECT max(id) FROM tenants_tenant)",
    "insert without tenant": "INSERT INTO corpus_chunk (id, text) VALUES ($1, $2)",
    "join": "SELECT 1 FROM corpus_chunk c, corpus_document d WHERE d.id = c.document_id",
    "volatile in WHERE": "DELETE FROM answering_pendingask WHERE tenant_id = $1 AND expires_at < clock_timestamp()",
    "volatile in a subquery of WHERE": "DELETE FROM answering_pendingask WHERE tenant_id = $1 AND id IN "
    "(SELECT id FROM answering_pendingask WHERE tenant_id = $1 AND expires_at < clock_timestamp())",
    "volatile in SET": "UPDATE cachelayer_entry SET last_hit_at = clock_timestamp() WHERE tenant_id = $1",
    "stable given a column": "UPDATE cachelayer_entry SET day = date_trunc('day', created_at) WHERE tenant_id = $1",
    "mutable in ON CONFLICT SET": "INSERT INTO tenants_daily_spend AS s (tenant_id, day) VALUES ($1, $2) "
    "ON CONFLICT (tenant_id, day) DO UPDATE SET updated_at = now()",
    "mutable in RETURNING": "DELETE FROM answering_pendingask WHERE tenant_id = $1 AND id = $2 RETURNING now()",
    "modifying CTE": "WITH new AS (INSERT INTO corpus_document (tenant_id, title) VALUES ($1, $2) RETURNING id) "
    "INSERT INTO corpus_chunk (tenant_id, document_id) SELECT $1, id FROM new",
    "copy out": "COPY corpus_chunk TO STDOUT",
    "unparsed": "SELEC id FROM corpus_chunk",
}
EXPECTED = {
    "unrouted": ["unrouted: corpus_chunk not pinned to one tenant_id: every shard"],
    "unrouted under OR": ["unrouted: corpus_chunk not pinned to one tenant_id: every shard"],
    "unrouted by a set": ["unrouted: corpus_chunk not pinned to one tenant_id: every shard"],
    "unrouted by a subquery": ["unrouted: corpus_chunk not pinned to one tenant_id: every shard"],
    "insert without tenant": ["unrouted: INSERT corpus_chunk without tenant_id"],
    "join": ["unrouted: corpus_chunk not pinned to one tenant_id: every shard",
             "unrouted: corpus_document not pinned to one tenant_id: every shard",
             "join: corpus_chunk x corpus_document not joined on their distribution columns"],
    "volatile in WHERE": ["volatile: DELETE answering_pendingask: VOLATILE clock_timestamp in WHERE"],
    "volatile in a subquery of WHERE": ["volatile: DELETE answering_pendingask: VOLATILE clock_timestamp in WHERE"],
    "volatile in SET": ["volatile: UPDATE cachelayer_entry: VOLATILE clock_timestamp in SET"],
    "stable given a column": ["irreducible: cachelayer_entry: STABLE date_trunc() given a column"],
    "mutable in ON CONFLICT SET": ["mutable: INSERT tenants_daily_spend ON CONFLICT DO UPDATE SET updated_at = "
                                   "now(): must be IMMUTABLE"],
    "mutable in RETURNING": ["mutable: DELETE answering_pendingask RETURNING now(): must be IMMUTABLE"],
    "modifying CTE": ["modifying-cte: WITH new AS (Insert ...): planned apart, through the coordinator"],
    "copy out": ["unrouted: COPY corpus_chunk TO: every shard"],
    "unparsed": ["unparsed: ParseError: syntax error at or near \"SELEC\", at index 0"],
}


@pytest.mark.parametrize("kind", sorted(RED))
def test_forced_fail_each_kind_of_violation_is_found(kind: str) -> None:
    assert rules(RED[kind]) == EXPECTED[kind]


def test_a_join_on_the_tenant_across_tenants_is_only_unrouted() -> None:
    """An operator's statement over every tenant fans out, but its join still runs shard by shard."""
    found = rules("SELECT count(*) FROM corpus_chunk c JOIN corpus_document d ON d.tenant_id = c.tenant_id "
                  "AND d.id = c.document_id")
    assert [f.split(":")[0] for f in found] == ["unrouted", "unrouted"]


def test_relations_names_every_table() -> None:
    assert relations("SELECT 1 FROM a JOIN b ON true WHERE EXISTS (SELECT 1 FROM c)") == {"a", "b", "c"}


# --- ORM joins between tenant tables pair tenant_id (tenants/fields.py) -------------------------
def _tenant_relations() -> list[Any]:
    from django.apps import apps
    from django.db import models

    found = []
    for model in apps.get_models():
        for field in model._meta.get_fields():
            if isinstance(field, models.ForeignKey) and not field.auto_created and field.name != "tenant":
                target = field.remote_field.model
                if {"tenant"} <= {f.name for f in model._meta.get_fields()} and \
                        {"tenant"} <= {f.name for f in target._meta.get_fields()} and target.__name__ != "Tenant":
                    found.append(field)
    return found


def test_every_foreign_key_between_tenant_models_pairs_tenant_id() -> None:
    from tenants.distribution import REFERENCE
    from tenants.fields import _PairsTenant

    # Joins between reference tables, or to one, need no pairing: every node holds them whole.
    relations = [f for f in _tenant_relations()
                 if f.model._meta.db_table not in REFERENCE and f.remote_field.model._meta.db_table not in REFERENCE]
    assert len(relations) >= 8, relations
    assert [f"{f.model.__name__}.{f.name}" for f in relations if not isinstance(f, _PairsTenant)] == []


def test_an_orm_join_over_a_tenant_key_is_co_located_and_without_the_pairing_is_red() -> None:
    from answering.models import Escalation

    catalog = Catalog(distribution={"answering_escalation": "tenant_id", "answering_trace": "tenant_id",
                                    "corpus_ingestjob": "tenant_id"})
    statement = str(Escalation.objects.select_related("trace", "knowledge_job").filter(tenant_id=7, pk=1).query)
    assert '"answering_trace"."tenant_id" = ("answering_escalation"."tenant_id")' in statement
    assert findings(statement=statement, catalog=catalog) == []
    unpaired = statement.replace(' AND ("answering_trace"."tenant_id" = ("answering_escalation"."tenant_id"))', "")
    assert [f.rule for f in findings(statement=unpaired, catalog=catalog)] == ["unrouted", "join"]
