"""TenantScope: the only code that reads chunk rows.

Isolation is enforced here in four layers, with PostgreSQL row-level security beneath them
(docs/decisions/0002-tenant-scope-and-rls.md):

1. Composition: callers hand in SQL *fragments* (columns, a condition, an ordering); the
   scope writes the FROM clause and welds `tenant = … AND audience visible` onto every
   statement. There is no code path that builds a chunk query without the weld.
2. Construction-time guards: a fragment that mentions tenancy, audiences, archival, the
   RLS settings, or tries to end the statement is refused before anything runs.
3. A runtime tripwire: every row carries its tenant and audience back; a row outside the
   scope RAISES ScopeViolation. It never filters: a leak quietly corrected is a leak nobody
   investigates.
4. A source lint (tenants/tests/test_source_lint.py) fails the suite when any other module
   names the chunk table.

Beneath all of it the scope sets `app.tenant_id` / `app.audience_ids` for the transaction,
which the RLS policies read; the application role cannot bypass them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.db import connections, transaction
from psycopg import sql

CHUNK_TABLE = "corpus_chunk"

# Settings a read may tune for its own transaction (pgvector's iterative index scans).
_ALLOWED_LOCAL_SETTINGS = {"hnsw.ef_search", "hnsw.iterative_scan", "hnsw.max_scan_tuples", "enable_seqscan"}

_FORBIDDEN = re.compile(
    r"tenant|audience|archived|current_setting|set_config|row_security|app\.|pg_catalog"
    r"|;|--|/\*|\bunion\b|\binto\b|\bcorpus_chunk\b|%\(_scope",
    re.IGNORECASE,
)


class ScopeViolation(RuntimeError):
    """A row outside the scope came back. This is a crash on purpose, never a filter."""


class FragmentRejected(ValueError):
    """A caller's SQL fragment tried to touch what only the scope may decide."""


def _text(fragment: sql.Composable | None) -> str:
    return "" if fragment is None else fragment.as_string(None)


def _guard(name: str, fragment: sql.Composable | None) -> None:
    if fragment is not None and not isinstance(fragment, sql.Composable):
        raise FragmentRejected(f"{name} must be a psycopg.sql.Composable, not {type(fragment).__name__}")
    text = _text(fragment)
    match = _FORBIDDEN.search(text)
    if match:
        raise FragmentRejected(f"{name} fragment may not contain {match.group(0)!r}: tenancy belongs to the scope")


@dataclass(frozen=True)
class ChunkQuery:
    """A read of chunk rows, as fragments over the alias `c` (corpus_chunk).

    `select` lists output columns; `where` narrows (it is ANDed after the scope's weld);
    `order_by` and `limit` shape the result. Parameters are named (%(name)s).
    """

    select: sql.Composable
    where: sql.Composable | None = None
    order_by: sql.Composable | None = None
    limit: int | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    local_settings: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _guard("select", self.select)
        _guard("where", self.where)
        _guard("order_by", self.order_by)
        for key in self.params:
            if key.startswith("_scope"):
                raise FragmentRejected(f"parameter name {key!r} is reserved for the scope")
        for key in self.local_settings:
            if key not in _ALLOWED_LOCAL_SETTINGS:
                raise FragmentRejected(f"setting {key!r} is not one a chunk read may change")
        if self.limit is not None and (not isinstance(self.limit, int) or self.limit < 1):
            raise FragmentRejected(f"limit must be a positive integer, got {self.limit!r}")


@dataclass(frozen=True)
class TenantScope:
    """One tenant, one set of visible audiences. Archived chunks are invisible unless asked."""

    tenant_id: int
    audience_ids: tuple[int, ...]
    include_archived: bool = False
    using: str = "default"

    def __post_init__(self) -> None:
        if not isinstance(self.tenant_id, int) or self.tenant_id <= 0:
            raise ValueError(f"tenant_id must be a positive integer, got {self.tenant_id!r}")
        if any(not isinstance(a, int) for a in self.audience_ids):
            raise ValueError("audience_ids must be integers")

    # -- the weld ------------------------------------------------------------------------
    def _predicate(self) -> sql.Composable:
        weld = sql.SQL("c.tenant_id = %(_scope_tenant)s AND c.audience_id = ANY(%(_scope_audiences)s)")
        if not self.include_archived:
            weld = sql.SQL("{} AND NOT c.archived").format(weld)
        return weld

    def _params(self) -> dict[str, Any]:
        return {"_scope_tenant": self.tenant_id, "_scope_audiences": list(self.audience_ids)}

    def compose(self, query: ChunkQuery) -> sql.Composed:
        parts: list[sql.Composable] = [
            sql.SQL("SELECT {select}, c.tenant_id AS _scope_tenant, c.audience_id AS _scope_audience,"
                    " c.archived AS _scope_archived FROM {table} AS c WHERE ({weld})").format(
                select=query.select, table=sql.Identifier(CHUNK_TABLE), weld=self._predicate()
            )
        ]
        if query.where is not None:
            parts.append(sql.SQL(" AND ({})").format(query.where))
        if query.order_by is not None:
            parts.append(sql.SQL(" ORDER BY {}").format(query.order_by))
        if query.limit is not None:
            parts.append(sql.SQL(" LIMIT {}").format(sql.Literal(query.limit)))
        return sql.Composed(parts)

    # -- running -------------------------------------------------------------------------
    @contextmanager
    def rls_context(self) -> Iterator[Any]:
        """A transaction with the RLS settings of this scope, cleared again on the way out."""
        connection = connections[self.using]
        with transaction.atomic(using=self.using), connection.cursor() as cursor:
            cursor.execute(
                "SELECT set_config('app.tenant_id', %s, true), set_config('app.audience_ids', %s, true)",
                [str(self.tenant_id), ",".join(str(a) for a in self.audience_ids)],
            )
            yield cursor
            # On an exception the atomic block rolls back, which reverts SET LOCAL as well.
            cursor.execute("SELECT set_config('app.tenant_id', '', true), set_config('app.audience_ids', '', true)")

    def fetch(self, query: ChunkQuery) -> list[dict[str, Any]]:
        statement = self.compose(query).as_string(None)
        params = {**query.params, **self._params()}
        with self.rls_context() as cursor:
            for key, value in query.local_settings.items():
                cursor.execute("SELECT set_config(%s, %s, true)", [key, value])
            cursor.execute(statement, params)
            columns = [col.name for col in cursor.description]
            rows = [dict(zip(columns, row)) for row in cursor.fetchall()]
        self._tripwire(rows)
        for row in rows:
            del row["_scope_tenant"], row["_scope_audience"]
            row["archived"] = row.pop("_scope_archived")
        return rows

    def _tripwire(self, rows: Sequence[Mapping[str, Any]]) -> None:
        allowed = set(self.audience_ids)
        for row in rows:
            if row["_scope_tenant"] != self.tenant_id:
                raise ScopeViolation(
                    f"chunk row of tenant {row['_scope_tenant']} returned to a scope of tenant {self.tenant_id}"
                )
            if row["_scope_audience"] not in allowed:
                raise ScopeViolation(
                    f"chunk row of audience {row['_scope_audience']} returned to readers of {sorted(allowed)}"
                )
            if row["_scope_archived"] and not self.include_archived:
                raise ScopeViolation("archived chunk row returned to a live read")


@dataclass(frozen=True)
class ChunkRow:
    document_id: int
    audience_id: int
    ordinal: int
    heading_path: str
    content: str
    token_count: int
    embedding: Sequence[float]
    ts_config: str = "english"
    page: int | None = None
    contested: bool = False
    context_blurb: str = ""


@dataclass(frozen=True)
class ChunkWriter:
    """Writes a tenant's chunk rows, inside the caller's transaction.

    Writers see every audience of their own tenant (ingest replaces internal documents too)
    and nothing of any other tenant: the RLS policy's WITH CHECK refuses a foreign row.
    """

    tenant_id: int
    using: str = "default"

    @contextmanager
    def rls_context(self) -> Iterator[Any]:
        connection = connections[self.using]
        with transaction.atomic(using=self.using), connection.cursor() as cursor:
            cursor.execute(
                "SELECT set_config('app.tenant_id', %(t)s, true),"
                " set_config('app.audience_ids',"
                "   (SELECT coalesce(string_agg(id::text, ','), '') FROM tenants_audience WHERE tenant_id = %(tid)s),"
                "   true)",
                {"t": str(self.tenant_id), "tid": self.tenant_id},
            )
            yield cursor
            # On an exception the atomic block rolls back, which reverts SET LOCAL as well.
            cursor.execute("SELECT set_config('app.tenant_id', '', true), set_config('app.audience_ids', '', true)")

    def insert(self, cursor: Any, rows: Sequence[ChunkRow]) -> None:
        """Insert in one pipelined executemany (PostgreSQL refuses COPY into an RLS table)."""
        statement = sql.SQL(
            "INSERT INTO {} (tenant_id, document_id, audience_id, ordinal, heading_path, content, page,"
            " token_count, embedding, ts_config, contested, context_blurb)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s::vector, %s::regconfig, %s, %s)"
        ).format(sql.Identifier(CHUNK_TABLE))
        cursor.executemany(
            statement.as_string(None),
            [
                (
                    self.tenant_id,
                    row.document_id,
                    row.audience_id,
                    row.ordinal,
                    row.heading_path,
                    row.content,
                    row.page,
                    row.token_count,
                    _vector_text(row.embedding),
                    row.ts_config,
                    row.contested,
                    row.context_blurb,
                )
                for row in rows
            ],
        )

    def delete_for_documents(self, cursor: Any, document_ids: Sequence[int]) -> list[int]:
        """Delete the chunks of these documents and return their ids (for cache invalidation)."""
        cursor.execute(
            sql.SQL("DELETE FROM {} WHERE tenant_id = %(t)s AND document_id = ANY(%(d)s) RETURNING id, tenant_id")
            .format(sql.Identifier(CHUNK_TABLE))
            .as_string(None),
            {"t": self.tenant_id, "d": list(document_ids)},
        )
        return self._ids(cursor.fetchall())

    def set_archived(self, cursor: Any, document_ids: Sequence[int], archived: bool) -> list[int]:
        cursor.execute(
            sql.SQL(
                "UPDATE {} SET archived = %(a)s WHERE tenant_id = %(t)s AND document_id = ANY(%(d)s)"
                " RETURNING id, tenant_id"
            )
            .format(sql.Identifier(CHUNK_TABLE))
            .as_string(None),
            {"a": archived, "t": self.tenant_id, "d": list(document_ids)},
        )
        return self._ids(cursor.fetchall())

    def set_contested(self, cursor: Any, document_ids: Sequence[int], match: str) -> list[int]:
        """Tag the live chunks of these documents that contain `match` (case-insensitive)."""
        cursor.execute(
            sql.SQL(
                "UPDATE {} SET contested = true WHERE tenant_id = %(t)s AND document_id = ANY(%(d)s)"
                " AND NOT contested AND strpos(lower(content), lower(%(m)s)) > 0 RETURNING id, tenant_id"
            )
            .format(sql.Identifier(CHUNK_TABLE))
            .as_string(None),
            {"t": self.tenant_id, "d": list(document_ids), "m": match},
        )
        return self._ids(cursor.fetchall())

    def _ids(self, rows: Sequence[tuple[int, int]]) -> list[int]:
        for _, tenant_id in rows:
            if tenant_id != self.tenant_id:
                raise ScopeViolation(f"writer of tenant {self.tenant_id} touched a row of tenant {tenant_id}")
        return sorted(chunk_id for chunk_id, _ in rows)


def _vector_text(values: Sequence[float]) -> str:
    return "[" + ",".join(repr(float(v)) for v in values) + "]"
