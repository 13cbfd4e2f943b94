"""Citus's rules for co-located distributed tables, checked on a catalog read by
tenants.distribution.read_schema. Each rule is one Citus refuses at `create_distributed_table`
or `create_reference_table` time (or, for the last, a write it refuses later):

1. classified: a table without `tenant_id` must be named reference, local or distributed by
   another column (tenants/distribution.py); a tenant table is distributed by `tenant_id`.
2. key: every primary key, unique constraint and unique index of a distributed table holds its
   distribution column ("creating unique indexes on non-partition columns is currently
   unsupported").
3. co-located foreign key: between distributed tables, the key pairs the two distribution
   columns at the same position, and both tables are in one co-location group.
4. direction: a distributed table references distributed or reference tables only; a reference
   table references reference tables only; a local table never references a distributed one.
5. actions: a foreign key that holds the distribution column has no ON DELETE SET NULL / SET
   DEFAULT and no ON UPDATE SET NULL / SET DEFAULT / CASCADE; PostgreSQL 15's column list
   (SET NULL (col)) does not help, Citus checks the action.
6. the distribution column is NOT NULL and not an identity column.
"""

from __future__ import annotations

from tenants.distribution import ForeignKey, Schema, distribution_of, kind_of


def violations(schema: Schema) -> list[str]:
    found: list[str] = []
    kinds = {name: kind_of(table) for name, table in schema.tables.items()}
    for name, table in sorted(schema.tables.items()):
        column = distribution_of(table)
        if kinds[name] == "unclassified":
            found.append(f"{name}: no tenant_id and not classified in tenants/distribution.py")
        elif column and (column not in table.not_null or column in table.identity):
            found.append(f"{name}: distribution column {column} must be NOT NULL and not an identity")
    for unique in sorted(schema.uniques, key=lambda u: (u.table, u.name)):
        owner = schema.tables.get(unique.table)
        column = distribution_of(owner) if owner else None
        if column and column not in unique.columns:
            found.append(f"{unique.table}: unique {unique.name} {list(unique.columns)} lacks {column}")
    for key in sorted(schema.foreign_keys, key=lambda k: (k.table, k.name)):
        found += _foreign_key_violations(schema, kinds, key)
    return found


def _foreign_key_violations(schema: Schema, kinds: dict[str, str], key: ForeignKey) -> list[str]:
    source, target = kinds.get(key.table), kinds.get(key.ref_table)
    label = f"{key.table}: foreign key {key.name} {list(key.columns)} -> {key.ref_table}{list(key.ref_columns)}"
    found = []
    allowed = {"distributed": {"distributed", "reference"}, "reference": {"reference"},
               "local": {"local", "reference"}}.get(source or "", set())
    if source in allowed and target not in allowed:
        found.append(f"{label}: a {source} table may not reference a {target} table")
    column = distribution_of(schema.tables[key.table]) if source == "distributed" else None
    if column and target == "distributed":
        ref_column = distribution_of(schema.tables[key.ref_table])
        paired = any(c == column and r == ref_column for c, r in zip(key.columns, key.ref_columns))
        if not paired or column != ref_column:
            found.append(f"{label}: between distributed tables the key must pair {column} with {ref_column}")
    if column and column in key.columns:
        if key.on_delete in ("n", "d") or key.on_update in ("n", "d", "c"):
            found.append(f"{label}: Citus refuses SET NULL/SET DEFAULT (or ON UPDATE CASCADE) on a key "
                         f"holding {column}")
    return found
