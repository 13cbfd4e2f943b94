"""The migrated schema stays one Citus can distribute by tenant, co-located (docs/decisions/0048).

Reads the catalog of the test database after every migration (tenants.distribution.read_schema)
and applies Citus's rules for co-located distributed tables (tenants/citus_rules.py): a
tenant table (one with `tenant_id`) is distributed by it, and `tenant_id` is in each of its
primary keys, unique constraints and unique indexes; foreign keys between distributed tables
pair their `tenant_id`s; no reference table points at a distributed one. Every table is
classified, so a table added tomorrow is checked without being listed here.

And the queries the tenant scope builds filter by one tenant with an equality on `tenant_id`
outside any OR, on every tenant table they name: Citus routes such a statement to one shard.
The statements are caught as PostgreSQL ran them (parameters bound), so the check reads what
reached the server, not what the code meant to send.

Forced fails: a planted table without `tenant_id` in its key, a planted foreign key that skips
`tenant_id`, and a scope whose weld filters by a set of tenants all turn the checks red.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import connection, connections
from django.test.utils import CaptureQueriesContext
from psycopg import sql

from tenants.distribution import citus_statements, kind_of, read_schema
from tenants.scope import ChunkQuery, TenantScope
from tenants.citus_rules import violations
from tenants.tests.test_source_lint import source_offenders

DOC = Path(__file__).resolve().parents[2] / "docs" / "scaling.md"


def current_violations() -> list[str]:
    with connection.cursor() as cursor:
        return violations(read_schema(cursor))


@pytest.mark.django_db
def test_the_migrated_schema_follows_citus_rules() -> None:
    assert current_violations() == []


@pytest.mark.django_db
def test_tenant_tables_are_distributed_and_the_shared_ones_are_reference() -> None:
    with connection.cursor() as cursor:
        schema = read_schema(cursor)
    kinds = {name: kind_of(table) for name, table in schema.tables.items()}
    for name in ("corpus_chunk", "corpus_document", "corpus_term_stats", "corpus_audience_stats",
                 "cachelayer_entry", "answering_trace", "answering_escalation", "corpus_ingestjob",
                 "corpus_websource", "corpus_webpage"):
        assert kinds[name] == "distributed", name
    for name in ("tenants_tenant", "tenants_audience", "auth_user"):
        assert kinds[name] == "reference", name


@pytest.mark.django_db
def test_docs_scaling_holds_the_statements_for_this_schema() -> None:
    """docs/scaling.md quotes the statements; a new table or key order changes them, and the doc with them."""
    with connection.cursor() as cursor:
        statements = citus_statements(read_schema(cursor))
    text = DOC.read_text(encoding="utf-8")
    missing = [s for s in statements if s not in text]
    assert missing == [], "docs/scaling.md lacks (regenerate with tenants.distribution.citus_statements):\n" + \
        "\n".join(missing)


# --- Forced fails on the catalog: a planted table, a planted key ----------------------------
@pytest.fixture
def planted(db: Any) -> Iterator[Any]:
    """Tables planted by the owner inside the test's transaction, rolled back with it."""
    with connections["owner"].cursor() as cursor:
        yield cursor


@pytest.mark.django_db(databases=["default", "owner"])
def test_forced_fail_a_tenant_table_keyed_without_tenant_id(planted: Any) -> None:
    before = set(violations(read_schema(planted)))
    planted.execute("CREATE TABLE h21_planted (id bigserial PRIMARY KEY, tenant_id bigint NOT NULL,"
                    " slug text NOT NULL UNIQUE)")
    found = [f for f in violations(read_schema(planted)) if f not in before]
    assert found == [
        "h21_planted: unique h21_planted_pkey ['id'] lacks tenant_id",
        "h21_planted: unique h21_planted_slug_key ['slug'] lacks tenant_id",
    ]


@pytest.mark.django_db(databases=["default", "owner"])
def test_forced_fail_keys_and_directions(planted: Any) -> None:
    before = set(violations(read_schema(planted)))
    planted.execute("""
        CREATE TABLE h21_parent (tenant_id bigint NOT NULL, id bigint NOT NULL, PRIMARY KEY (tenant_id, id));
        CREATE TABLE h21_child (
            tenant_id bigint NOT NULL, id bigint NOT NULL, parent_id bigint, PRIMARY KEY (tenant_id, id),
            UNIQUE (tenant_id, parent_id),
            CONSTRAINT skips_tenant FOREIGN KEY (tenant_id, parent_id) REFERENCES h21_parent (id, tenant_id),
            CONSTRAINT nulls_tenant FOREIGN KEY (tenant_id, parent_id) REFERENCES h21_parent (tenant_id, id)
                ON DELETE SET NULL (parent_id));
        -- NOT VALID: tenants committed by the process tests' setups stay put; the catalog has it all the same.
        ALTER TABLE tenants_tenant ADD CONSTRAINT ref_to_dist FOREIGN KEY (id, id) REFERENCES h21_parent NOT VALID;
        CREATE TABLE h21_orphan (id bigint PRIMARY KEY);
    """)
    found = [f for f in violations(read_schema(planted)) if f not in before]
    assert "h21_orphan: no tenant_id and not classified in tenants/distribution.py" in found
    assert any(f.startswith("h21_child: foreign key skips_tenant") and "must pair tenant_id" in f for f in found)
    assert any(f.startswith("h21_child: foreign key nulls_tenant") and "SET NULL" in f for f in found)
    assert any(f.startswith("tenants_tenant: foreign key ref_to_dist") and "reference table may not" in f
               for f in found)
    assert len(found) == 4, found


# --- The scope's statements route to one shard ----------------------------------------------
_FROM = re.compile(r"\b(?:FROM|JOIN)\s+\"?([a-z_]+)\"?\s+(?:AS\s+)?([a-z_]+)", re.IGNORECASE)


def unrouted(statement: str, tenant_id: int, distributed: set[str]) -> list[str]:
    """Tenant tables of one statement that are not pinned to `tenant_id` by an equality.

    An alias is pinned by `alias.tenant_id = <tenant>` or by `alias.tenant_id = other.tenant_id`
    with `other` pinned; the equality must sit in the first parenthesised group after WHERE or
    in a JOIN's ON, with no OR in that group (an OR would let other tenants' rows through)."""
    aliases = {alias: table for table, alias in _FROM.findall(statement) if table in distributed}
    where = re.search(r"\bWHERE\s*(\((?:[^()]|\([^()]*\))*\)|[^()]*?(?:\bAND\b|$))", statement, re.IGNORECASE)
    ons = re.findall(r"\bON\s+(.*?)(?=\bJOIN\b|\bWHERE\b|\bCROSS\b|$)", statement, re.IGNORECASE | re.DOTALL)
    groups = [g for g in [where.group(1) if where else "", *ons] if not re.search(r"\bOR\b", g, re.IGNORECASE)]
    text = " AND ".join(groups)
    pinned = {a for a in aliases if re.search(rf"\b{a}\.tenant_id\s*=\s*{tenant_id}\b", text)}
    changed = True
    while changed:
        changed = False
        for alias in set(aliases) - pinned:
            for other in list(pinned):
                if re.search(rf"\b{alias}\.tenant_id\s*=\s*{other}\.tenant_id\b|\b{other}\.tenant_id\s*=\s*"
                             rf"{alias}\.tenant_id\b", text):
                    pinned.add(alias)
                    changed = True
    return sorted(aliases[a] for a in set(aliases) - pinned)


def scope_statements(scope: TenantScope) -> list[str]:
    """Every statement a scope sends for each kind of read it offers, as PostgreSQL received it."""
    reads = [
        ChunkQuery(select=sql.SQL("c.id"), order_by=sql.SQL("c.id"), limit=5),
        ChunkQuery(select=sql.SQL("c.id, d.title"), with_document=True, where=sql.SQL("c.ordinal = 0")),
        ChunkQuery(select=sql.SQL("u.lexeme, count(*)"), lateral=sql.SQL("unnest(c.tsv) AS u"),
                   group_by=sql.SQL("u.lexeme")),
    ]
    with CaptureQueriesContext(connection) as captured:
        for read in reads:
            scope.fetch(read)
        scope.document_frequencies(["install"])
        scope.corpus_totals()
        scope.similar_terms("instal")
        with scope.rls_context() as cursor:
            scope.lock_live(cursor, [1, 2])
    return [q["sql"] for q in captured.captured_queries]


def unrouted_statements(scope: TenantScope) -> list[str]:
    with connection.cursor() as cursor:
        schema = read_schema(cursor)
    distributed = {name for name, table in schema.tables.items() if kind_of(table) == "distributed"}
    statements = [s for s in scope_statements(scope) if _FROM.search(s) and
                  {t for t, _ in _FROM.findall(s)} & distributed]
    assert len(statements) >= 7, statements  # each read above reached the server
    return [f"{tables}: {s}" for s in statements if (tables := unrouted(s, scope.tenant_id, distributed))]


@pytest.mark.django_db
def test_every_statement_of_the_scope_routes_to_one_tenant(acme: Any) -> None:
    scope = TenantScope(tenant_id=acme.tenant.id, audience_ids=(acme.public_id, acme.customer_id))
    assert unrouted_statements(scope) == []


@pytest.mark.django_db
@pytest.mark.planted_sql
def test_forced_fail_a_weld_over_a_set_of_tenants(acme: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A weld of `tenant_id = ANY(...)` or one under an OR would fan out to every shard."""
    monkeypatch.setattr(TenantScope, "_predicate", lambda self: sql.SQL(
        "(c.tenant_id = %(_scope_tenant)s OR c.tenant_id = 0) AND c.audience_id = ANY(%(_scope_audiences)s)"))
    scope = TenantScope(tenant_id=acme.tenant.id, audience_ids=(acme.public_id,))
    found = unrouted_statements(scope)
    assert len(found) == 4 and all("corpus_chunk" in f.split(":")[0] for f in found), found


# --- Transaction settings reach Citus workers --------------------------------------------------
_SET_CONFIG = re.compile(r"set_config\(\s*(?:'|%)", re.IGNORECASE)
_PRODUCT = ["config", "tenants", "corpus", "retrieval", "answering", "evaluation", "cachelayer"]


def set_config_calls(root: Path, apps: list[str]) -> list[str]:
    """Product code that sets a transaction-local setting with set_config() instead of SET LOCAL
    (tenants.rls.set_local): Citus forwards only SET LOCAL to the workers."""
    return source_offenders(root, apps, _SET_CONFIG)


def test_transaction_settings_are_set_local() -> None:
    assert set_config_calls(DOC.parents[1], _PRODUCT) == []


def test_forced_fail_a_set_config_call(tmp_path: Path) -> None:
    planted = tmp_path / "answering" / "page.py"
    planted.parent.mkdir()
    planted.write_text("cursor.execute(\"SELECT set_config('app.tenant_id', %s, true)\", [tenant])\n")
    assert set_config_calls(tmp_path, ["answering"]) == [
        "answering/page.py:1: cursor.execute(\"SELECT set_config('app.tenant_id', %s, true)\", [tenant])"]
