"""Where each table goes when one PostgreSQL server becomes a Citus cluster (docs/scaling.md).

Nothing here runs against a live cluster: Citus is not part of the product. This module is the
plan as data, read from the migrated schema's catalog, so the plan cannot drift from the
tables (docs/decisions/0048):

- every table with a `tenant_id` column is distributed by it, all in one co-location group,
  unless it is named in REFERENCE;
- REFERENCE tables are small, read on every request before the tenant is known, or shared by
  all tenants, and are copied whole to every node;
- OTHER_DISTRIBUTED tables are distributed by another column, in a group of their own;
- LOCAL tables stay on the coordinator.

A new table that has no `tenant_id` and is in none of these lists is a finding of the
compatibility test (tenants/tests/test_citus_compat.py): someone has to decide where it goes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

DISTRIBUTION_COLUMN = "tenant_id"

# Looked up before a tenant is known (a key by its prefix, a user's memberships), or the
# tenant row itself: a distributed copy would make each such lookup a query of every shard.
REFERENCE: frozenset[str] = frozenset({
    "tenants_tenant", "tenants_audience", "tenants_membership", "tenants_membership_audience",
    "tenants_apikey", "tenants_apikey_audience",
    # Django's users and what they reference: memberships, escalations and jobs point at users.
    "auth_user", "auth_group", "auth_permission", "auth_group_permissions", "auth_user_groups",
    "auth_user_user_permissions", "django_content_type",
})

# Counters keyed by an opaque bucket (an API key prefix, a client address): no tenant is known
# when the per-address limit runs, and every statement names one bucket, so it routes alone.
OTHER_DISTRIBUTED: Mapping[str, str] = {"tenants_ratelimit": "bucket"}

# Coordinator-only: bookkeeping, sessions and the task queue, none of it tenant data.
LOCAL: frozenset[str] = frozenset({
    "django_migrations", "django_session", "django_admin_log", "django_tasks_database_dbtaskresult",
})


@dataclass(frozen=True)
class Table:
    name: str
    columns: frozenset[str]
    not_null: frozenset[str]
    identity: frozenset[str]


@dataclass(frozen=True)
class Unique:
    table: str
    name: str
    columns: tuple[str, ...]


@dataclass(frozen=True)
class ForeignKey:
    table: str
    name: str
    columns: tuple[str, ...]
    ref_table: str
    ref_columns: tuple[str, ...]
    on_delete: str  # pg_constraint.confdeltype: a, r, c, n, d
    on_update: str


@dataclass(frozen=True)
class Schema:
    tables: dict[str, Table]
    uniques: list[Unique]
    foreign_keys: list[ForeignKey]


def distribution_of(table: Table) -> str | None:
    """The table's distribution column, or None for a reference or coordinator-local table."""
    if table.name in REFERENCE or table.name in LOCAL:
        return None
    if table.name in OTHER_DISTRIBUTED:
        return OTHER_DISTRIBUTED[table.name]
    return DISTRIBUTION_COLUMN if DISTRIBUTION_COLUMN in table.columns else None


def kind_of(table: Table) -> str:
    """reference, local, distributed or unclassified."""
    if table.name in REFERENCE:
        return "reference"
    if table.name in LOCAL:
        return "local"
    return "distributed" if distribution_of(table) else "unclassified"


_TABLES = """
SELECT c.relname, a.attname, a.attnotnull, a.attidentity <> ''
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition
"""
# Unique indexes, whether or not a constraint owns them: Citus refuses both alike.
_UNIQUES = """
SELECT t.relname, i.relname, array_agg(a.attname ORDER BY k.ord)
FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
JOIN pg_namespace n ON n.oid = t.relnamespace
CROSS JOIN LATERAL unnest(x.indkey) WITH ORDINALITY AS k(attnum, ord)
LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
WHERE n.nspname = current_schema() AND x.indisunique
GROUP BY t.relname, i.relname
"""
_FOREIGN_KEYS = """
SELECT t.relname, con.conname, r.relname,
       array(SELECT attname FROM unnest(con.conkey) WITH ORDINALITY k(n, o)
             JOIN pg_attribute ON attrelid = con.conrelid AND attnum = k.n ORDER BY k.o),
       array(SELECT attname FROM unnest(con.confkey) WITH ORDINALITY k(n, o)
             JOIN pg_attribute ON attrelid = con.confrelid AND attnum = k.n ORDER BY k.o),
       con.confdeltype, con.confupdtype
FROM pg_constraint con JOIN pg_class t ON t.oid = con.conrelid JOIN pg_class r ON r.oid = con.confrelid
JOIN pg_namespace n ON n.oid = t.relnamespace
WHERE n.nspname = current_schema() AND con.contype = 'f'
"""


def read_schema(cursor: Any) -> Schema:
    """The tables, unique indexes and foreign keys of the current schema (catalog only, no rows)."""
    cursor.execute(_TABLES)
    columns: dict[str, dict[str, tuple[bool, bool]]] = {}
    for table, column, not_null, identity in cursor.fetchall():
        columns.setdefault(table, {})[column] = (not_null, identity)
    tables = {
        name: Table(name=name, columns=frozenset(cols), not_null=frozenset(c for c, v in cols.items() if v[0]),
                    identity=frozenset(c for c, v in cols.items() if v[1]))
        for name, cols in columns.items()
    }
    cursor.execute(_UNIQUES)
    uniques = [Unique(table=t, name=i, columns=tuple(c or "<expression>" for c in cols))
               for t, i, cols in cursor.fetchall()]
    cursor.execute(_FOREIGN_KEYS)
    foreign_keys = [ForeignKey(table=t, name=n, ref_table=r, columns=tuple(c), ref_columns=tuple(rc),
                               on_delete=d, on_update=u) for t, n, r, c, rc, d, u in cursor.fetchall()]
    return Schema(tables=tables, uniques=uniques, foreign_keys=foreign_keys)


def _ordered(names: list[str], schema: Schema) -> list[str]:
    """Referenced tables before the tables that reference them (Citus needs that order)."""
    wanted, done, order = set(names), set(), []

    def visit(name: str) -> None:
        if name in done:
            return
        done.add(name)
        for key in sorted((k for k in schema.foreign_keys if k.table == name), key=lambda k: k.ref_table):
            if key.ref_table in wanted and key.ref_table != name:
                visit(key.ref_table)
        order.append(name)

    for name in sorted(names):
        visit(name)
    return order


def citus_statements(schema: Schema) -> list[str]:
    """The statements that turn this schema into a co-located Citus schema, in order."""
    by_kind: dict[str, list[str]] = {}
    for table in schema.tables.values():
        by_kind.setdefault(kind_of(table), []).append(table.name)
    statements = [f"SELECT create_reference_table('{name}');"
                  for name in _ordered(by_kind.get("reference", []), schema)]
    tenant_tables = [name for name in by_kind.get("distributed", []) if name not in OTHER_DISTRIBUTED]
    anchor = None
    for name in _ordered(tenant_tables, schema):
        colocate = f", colocate_with => '{anchor}'" if anchor else ""
        statements.append(f"SELECT create_distributed_table('{name}', '{DISTRIBUTION_COLUMN}'{colocate});")
        anchor = anchor or name
    statements += [f"SELECT create_distributed_table('{name}', '{column}', colocate_with => 'none');"
                   for name, column in sorted(OTHER_DISTRIBUTED.items()) if name in schema.tables]
    return statements
