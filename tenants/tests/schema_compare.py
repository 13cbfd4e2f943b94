"""Compare unmanaged models with the tables the raw-SQL migrations made.

The rules are in the docstring of tenants/tests/test_schema.py; this module only reads the
catalog (two queries for the whole schema) and applies them. A finding is a `Mismatch`
keyed by (table, column, aspect), the key the test's allowlist uses.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper

NOW = "now()"
SEQUENCE = "sequence"

# pg_constraint.confdeltype: a NO ACTION, r RESTRICT, c CASCADE, n SET NULL, d SET DEFAULT.
ON_DELETE_NAMES = {"a": "NO ACTION", "r": "RESTRICT", "c": "CASCADE", "n": "SET NULL", "d": "SET DEFAULT"}
_COMPATIBLE_ON_DELETE: dict[Callable[..., Any], set[str]] = {
    models.CASCADE: {"c"},
    models.SET_NULL: {"n"},
    models.SET_DEFAULT: {"d"},
    # NO ACTION is checked at the end of the statement, so rows deleted together pass: that is
    # Django's RESTRICT. PROTECT refuses even then, as RESTRICT does checking row by row.
    models.PROTECT: {"r"},
    models.RESTRICT: {"a"},
    models.DO_NOTHING: {"a", "r", "c", "n", "d"},
}

_TYPE_ALIASES = {
    "varchar": "character varying", "char": "character", "int": "integer", "int4": "integer",
    "int8": "bigint", "int2": "smallint", "serial": "integer", "serial4": "integer",
    "bigserial": "bigint", "serial8": "bigint", "smallserial": "smallint", "bool": "boolean",
    "timestamptz": "timestamp with time zone", "timestamp": "timestamp without time zone",
    "timetz": "time with time zone", "time": "time without time zone", "decimal": "numeric",
    "float8": "double precision", "float4": "real",
}
_TYPE_SHAPE = re.compile(r"(?P<base>[a-z_][a-z0-9_ ]*?)\s*(?:\((?P<args>[0-9,\s]+)\))?")


@dataclass(frozen=True)
class Column:
    type: str
    nullable: bool
    default: str | None  # pg_get_expr of the column default, None without one
    identity: bool


@dataclass(frozen=True)
class ForeignKey:
    ref_table: str
    ref_column: str
    on_delete: str  # a confdeltype letter


@dataclass(frozen=True)
class Catalog:
    columns: dict[str, dict[str, Column]]  # table -> column -> Column
    foreign_keys: dict[tuple[str, str], list[ForeignKey]]  # (table, column) -> references


@dataclass(frozen=True)
class Mismatch:
    table: str
    column: str
    aspect: str  # column, type, null, default, foreign key, on_delete, unmirrored
    detail: str

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.table, self.column, self.aspect)

    def __str__(self) -> str:
        return f"{self.table}.{self.column} [{self.aspect}]: {self.detail}"


def normalise_type(name: str) -> str:
    """One spelling per PostgreSQL type: `varchar(63)` and `character varying(63)` agree."""
    text = " ".join(name.lower().split())
    arrays = ""
    while text.endswith("[]"):
        text, arrays = text[:-2].rstrip(), arrays + "[]"
    shape = _TYPE_SHAPE.fullmatch(text)
    if shape is None:
        return text + arrays
    base = _TYPE_ALIASES.get(shape["base"], shape["base"])
    args = ",".join(part.strip() for part in shape["args"].split(",")) if shape["args"] else ""
    return f"{base}({args}){arrays}" if args else base + arrays


def read_catalog(connection: BaseDatabaseWrapper) -> Catalog:
    """Every column and every foreign-key column pair of the current schema, in two queries."""
    columns: dict[str, dict[str, Column]] = {}
    foreign_keys: dict[tuple[str, str], list[ForeignKey]] = {}
    with connection.cursor() as cursor:
        cursor.execute("""
            SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), NOT a.attnotnull,
                   pg_get_expr(d.adbin, d.adrelid), a.attidentity <> ''
            FROM pg_attribute a
            JOIN pg_class c ON c.oid = a.attrelid
            LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
            WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')
              AND a.attnum > 0 AND NOT a.attisdropped
        """)
        for table, column, type_, nullable, default, identity in cursor.fetchall():
            columns.setdefault(table, {})[column] = Column(type_, nullable, default, identity)
        cursor.execute("""
            SELECT src.relname, sa.attname, dst.relname, da.attname, con.confdeltype
            FROM pg_constraint con
            JOIN pg_class src ON src.oid = con.conrelid
            JOIN pg_class dst ON dst.oid = con.confrelid
            CROSS JOIN LATERAL unnest(con.conkey, con.confkey) AS k(src_num, dst_num)
            JOIN pg_attribute sa ON sa.attrelid = con.conrelid AND sa.attnum = k.src_num
            JOIN pg_attribute da ON da.attrelid = con.confrelid AND da.attnum = k.dst_num
            WHERE con.contype = 'f' AND src.relnamespace = current_schema()::regnamespace
        """)
        for table, column, ref_table, ref_column, on_delete in cursor.fetchall():
            foreign_keys.setdefault((table, column), []).append(ForeignKey(ref_table, ref_column, on_delete))
    return Catalog(columns, foreign_keys)


def parse_default(expr: str | None) -> Any:
    """A column default as the Python value the ORM would write, where it is a plain literal."""
    if expr is None:
        return None
    if expr.startswith("nextval("):
        return SEQUENCE
    if expr in ("now()", "CURRENT_TIMESTAMP", "statement_timestamp()", "transaction_timestamp()"):
        return NOW
    if expr in ("true", "false"):
        return expr == "true"
    literal = re.fullmatch(r"'((?:[^']|'')*)'(?:::(.+))?", expr)
    if literal:
        text, cast = literal[1].replace("''", "'"), (literal[2] or "").strip()
        if cast in ("jsonb", "json"):
            return json.loads(text)
        if cast.endswith("[]") and text.startswith("{") and text.endswith("}"):
            return [] if text == "{}" else expr  # only the empty array is read; others stay raw
        return text
    try:
        return Decimal(expr.strip("()"))
    except InvalidOperation:
        return expr


def model_default(field: models.Field[Any, Any]) -> tuple[bool, Any]:
    """(declared, value): what the ORM writes when the caller gives nothing, if the model says."""
    if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
        return True, NOW
    if field.has_default():
        return True, field.default() if callable(field.default) else field.default
    return False, None


def _resolve(catalog: Catalog, table: str, column: str, target: tuple[str, str],
             depth: int = 3) -> list[ForeignKey] | None:
    """The chain of references from (table, column) to target, or None.

    A composite key such as (tenant_id, membership_id) -> membership (tenant_id, id) pins
    tenant_id to the parent's tenant_id, which itself references tenants_tenant.id: the
    database guarantees the model's tenant foreign key through the parent, so it counts.
    """
    for ref in catalog.foreign_keys.get((table, column), []):
        if (ref.ref_table, ref.ref_column) == target:
            return [ref]
        if depth > 1 and (rest := _resolve(catalog, ref.ref_table, ref.ref_column, target, depth - 1)):
            return [ref, *rest]
    return None


def effective_on_delete(chain: Sequence[ForeignKey]) -> str:
    """What deleting the target row does to this row: the nearest hop's rule if every hop
    further out cascades, otherwise the first hop out that does not cascade (it decides)."""
    for ref in reversed(chain[1:]):
        if ref.on_delete != "c":
            return ref.on_delete
    return chain[0].on_delete


def _compare_type(field: models.Field[Any, Any], column: Column, connection: BaseDatabaseWrapper) -> str | None:
    declared = field.db_type(connection)
    if declared is None or normalise_type(declared) == normalise_type(column.type):
        return None
    return f"model {declared!r}, table {column.type!r}"


def _compare_null(field: models.Field[Any, Any], column: Column) -> str | None:
    if field.null == column.nullable:
        return None
    return "model null=True, column NOT NULL" if field.null else "model null=False, column NULLable"


def _compare_default(field: models.Field[Any, Any], column: Column) -> str | None:
    if field.primary_key:
        if isinstance(field, models.AutoField | models.BigAutoField | models.SmallAutoField) and not (
            column.identity or parse_default(column.default) == SEQUENCE
        ):
            return "auto primary key, but the column has no sequence or identity"
        return None
    declared, value = model_default(field)
    if field.has_db_default():
        return None if column.default is not None else "model db_default, column has no default"
    in_table = parse_default(column.default)
    if declared:
        if column.default is None:
            return f"model default {value!r}, column has no default (a raw-SQL insert would not get it)"
        return None if in_table == value else f"model default {value!r}, column default {column.default}"
    if column.default is None:
        return None
    # Django writes every column on insert, so a database default is never applied through
    # the ORM: the field's own empty value is written instead, and must be the same thing.
    orm_value = "" if (field.empty_strings_allowed and not field.null) else None
    if in_table == orm_value:
        return None
    return f"column default {column.default} is never applied by the ORM, which writes {orm_value!r}"


def _column_of(field: models.Field[Any, Any]) -> str:
    assert field.column is not None, f"{field} has no column"  # only concrete fields are compared
    return field.column


def _compare_relation(field: models.Field[Any, Any], table: str, catalog: Catalog) -> list[Mismatch]:
    name = _column_of(field)
    refs = catalog.foreign_keys.get((table, name), [])
    if not isinstance(field, models.ForeignObject) or field.related_model is None:
        return [Mismatch(table, name, "foreign key",
                         f"plain model field, but the column references {r.ref_table}.{r.ref_column}") for r in refs]
    target = (field.related_model._meta.db_table, _column_of(field.target_field))
    chain = _resolve(catalog, table, name, target)
    if chain is None:
        found = ", ".join(f"{r.ref_table}.{r.ref_column}" for r in refs) or "nothing"
        return [Mismatch(table, name, "foreign key",
                         f"model references {target[0]}.{target[1]}, the column references {found}")]
    on_delete = field.remote_field.on_delete
    assert on_delete is not None  # a foreign key's is required
    in_table = effective_on_delete(chain)
    if in_table in _COMPATIBLE_ON_DELETE.get(on_delete, set()):
        return []
    return [Mismatch(table, name, "on_delete",
                     f"model {on_delete.__name__}, database ON DELETE {ON_DELETE_NAMES[in_table]}")]


def compare_model(model: type[models.Model], catalog: Catalog,
                  connection: BaseDatabaseWrapper) -> list[Mismatch]:
    table = model._meta.db_table
    columns = catalog.columns.get(table)
    if columns is None:
        return [Mismatch(table, "*", "column", "the table does not exist")]
    found: list[Mismatch] = []
    mirrored = set()
    for field in model._meta.concrete_fields:
        name = _column_of(field)
        mirrored.add(name)
        column = columns.get(name)
        if column is None:
            found.append(Mismatch(table, name, "column", "no such column"))
            continue
        for aspect, detail in (("type", _compare_type(field, column, connection)),
                               ("null", _compare_null(field, column)),
                               ("default", _compare_default(field, column))):
            if detail:
                found.append(Mismatch(table, name, aspect, detail))
        found.extend(_compare_relation(field, table, catalog))
    for name, column in sorted(columns.items()):
        if name not in mirrored and not column.nullable and column.default is None:
            found.append(Mismatch(table, name, "unmirrored",
                                  f"NOT NULL {column.type} without a default and no model field: the ORM cannot insert"))
    return found


def compare(models_: Iterable[type[models.Model]], connection: BaseDatabaseWrapper,
            catalog: Catalog | None = None) -> list[Mismatch]:
    catalog = catalog or read_catalog(connection)
    return [m for model in models_ for m in compare_model(model, catalog, connection)]


def tables_without_models(catalog: Catalog, models_: Iterable[type[models.Model]]) -> list[str]:
    return sorted(set(catalog.columns) - {model._meta.db_table for model in models_})
