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
    definition: str = ""  # pg_get_constraintdef(): what re-adds the key after distribution


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
       con.confdeltype, con.confupdtype, pg_get_constraintdef(con.oid)
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
                               on_delete=d, on_update=u, definition=f) for t, n, r, c, rc, d, u, f in cursor.fetchall()]
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


# Settings every node needs before the tables move (superuser, once; see docs/scaling.md):
# the tenant and plan settings reach the workers only as SET LOCAL, and the chunk's tsvector
# trigger (corpus 0004) only touches its own row.
SETTINGS = (
    "ALTER SYSTEM SET citus.propagate_set_commands TO 'local';",
    "ALTER SYSTEM SET citus.enable_unsafe_triggers TO on;",
    "SELECT pg_reload_conf();",
)
SHARD_COUNT = 64  # room for 32 workers at two shards each


@dataclass(frozen=True)
class Step:
    """One statement of the distribution, with what it holds while it runs (docs/scaling.md)."""

    sql: str
    phase: str  # settings, reference, drop-key, distribute, add-key, validate-key, workers
    locks: str
    table: str | None = None


def _leakproof_statements() -> tuple[str, ...]:
    from config.embedded_db import LEAKPROOF_STATEMENTS

    return LEAKPROOF_STATEMENTS


def _text(template: str, **parts: Any) -> str:
    """A statement composed with psycopg.sql (identifiers and literals quoted by it), as text to
    print in the plan and to send as it is."""
    from psycopg import sql

    values = {name: sql.Identifier(v) if name.startswith("id_") else
              (v if isinstance(v, sql.Composable) else sql.Literal(v)) for name, v in parts.items()}
    return sql.SQL(template).format(**values).as_string(None)


def distribution_plan(schema: Schema) -> list[Step]:
    """The statements that turn this one-node schema into a co-located Citus schema, in order.

    Written for a live database: `create_distributed_table_concurrently` keeps the table
    writable while its rows move, but Citus refuses it while the table has a foreign key to or
    from another table that is not a reference table. So the keys between tenant tables are
    dropped first, every tenant table is distributed, and the keys come back NOT VALID (instant)
    and are then validated (reads only, writes go on). Reference tables are small and copied
    with a short write lock. Citus does not propagate `ALTER FUNCTION ... LEAKPROOF` (a catalog
    change of pg_catalog functions), so it runs on every worker through run_command_on_workers.
    """
    from psycopg import sql

    by_kind: dict[str, list[str]] = {}
    for table in schema.tables.values():
        by_kind.setdefault(kind_of(table), []).append(table.name)
    steps = [Step(sql=s, phase="settings", locks="none") for s in SETTINGS]
    steps.append(Step(sql=_text("SET citus.shard_count = {n};", n=sql.SQL(str(SHARD_COUNT))), phase="settings",
                      locks="none"))
    steps += [Step(sql=_text("SELECT create_reference_table({name});", name=name), phase="reference", table=name,
                   locks="writes to the table wait while its rows are copied to every node (small tables)")
              for name in _ordered(by_kind.get("reference", []), schema)]
    tenant_tables = [name for name in by_kind.get("distributed", []) if name not in OTHER_DISTRIBUTED]
    distributed = set(by_kind.get("distributed", []))
    between = sorted((k for k in schema.foreign_keys if k.table in distributed and k.ref_table in distributed),
                     key=lambda k: (k.table, k.name))
    steps += [Step(sql=_text("ALTER TABLE {id_t} DROP CONSTRAINT {id_k};", id_t=key.table, id_k=key.name),
                   phase="drop-key", table=key.table,
                   locks="ACCESS EXCLUSIVE on both tables for an instant (catalog only)") for key in between]
    anchor = None
    for name in _ordered(tenant_tables, schema):
        template = ("SELECT create_distributed_table_concurrently({name}, {column}, colocate_with => {anchor});"
                    if anchor else "SELECT create_distributed_table_concurrently({name}, {column});")
        steps.append(Step(
            sql=_text(template, name=name, column=DISTRIBUTION_COLUMN, anchor=anchor or ""),
            phase="distribute", table=name,
            locks="SHARE UPDATE EXCLUSIVE while the rows copy: reads and writes go on, DDL waits; writes pause "
                  "for a moment at the switch"))
        anchor = anchor or name
    steps += [Step(sql=_text("SELECT create_distributed_table_concurrently({name}, {column}, colocate_with => 'none');",
                             name=name, column=column),
                   phase="distribute", table=name, locks="as above")
              for name, column in sorted(OTHER_DISTRIBUTED.items()) if name in schema.tables]
    for key in between:
        steps.append(Step(sql=_text("ALTER TABLE {id_t} ADD CONSTRAINT {id_k} {definition} NOT VALID;",
                                    id_t=key.table, id_k=key.name, definition=sql.SQL(key.definition)),
                          phase="add-key", table=key.table,
                          locks="SHARE ROW EXCLUSIVE on both tables for an instant: existing rows are not read"))
    steps += [Step(sql=_text("ALTER TABLE {id_t} VALIDATE CONSTRAINT {id_k};", id_t=key.table, id_k=key.name),
                   phase="validate-key", table=key.table,
                   locks="SHARE UPDATE EXCLUSIVE while it reads every row: writes go on")
              for key in between]
    steps += [Step(sql=_text("SELECT * FROM run_command_on_workers({command});", command=statement),
                   phase="workers", locks="none (a catalog flag on each worker)")
              for statement in _leakproof_statements()]
    return steps


def citus_statements(schema: Schema) -> list[str]:
    """The plan's statements alone, as `manage.py distribute --plan` prints them."""
    return [step.sql for step in distribution_plan(schema)]
