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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import connections
from psycopg import sql

from tenants.rls import rls_transaction, scoped_read

CHUNK_TABLE = "corpus_chunk"
TERM_STATS_TABLE = "corpus_term_stats"
AUDIENCE_STATS_TABLE = "corpus_audience_stats"

# Settings a read may tune for its own transaction: pgvector's iterative index scans, and the
# plan switches a hot read uses to pick its path itself where row-level security leaves the
# planner's row estimates 10-50x too low (retrieval.legs, docs/decisions/0028).
_ALLOWED_LOCAL_SETTINGS = {"hnsw.ef_search", "hnsw.iterative_scan", "hnsw.max_scan_tuples", "enable_seqscan",
                           "enable_indexscan", "enable_bitmapscan", "enable_sort", "enable_nestloop",
                           "enable_hashjoin", "enable_mergejoin"}

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
    # A set-returning function over the chunk row (`unnest(c.tsv) AS u`), joined laterally.
    lateral: sql.Composable | None = None
    # GROUP BY after the weld; the scope groups by the chunk's primary key (tenant_id, id) too,
    # so its own columns stay valid.
    group_by: sql.Composable | None = None
    # Join the chunk's document as `d` (title, slug, source type, dates) in the same statement.
    with_document: bool = False

    def __post_init__(self) -> None:
        _guard("select", self.select)
        _guard("where", self.where)
        _guard("order_by", self.order_by)
        _guard("lateral", self.lateral)
        _guard("group_by", self.group_by)
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
        weld: sql.Composable = sql.SQL("c.tenant_id = %(_scope_tenant)s AND c.audience_id = ANY(%(_scope_audiences)s)")
        if not self.include_archived:
            weld = sql.SQL("{} AND NOT c.archived").format(weld)
        return weld

    def _params(self) -> dict[str, Any]:
        return {"_scope_tenant": self.tenant_id, "_scope_audiences": list(self.audience_ids)}

    def compose(self, query: ChunkQuery) -> sql.Composed:
        parts: list[sql.Composable] = [
            sql.SQL("SELECT {select}, c.tenant_id AS _scope_tenant, c.audience_id AS _scope_audience,"
                    " c.archived AS _scope_archived FROM {table} AS c").format(
                select=query.select, table=sql.Identifier(CHUNK_TABLE)
            )
        ]
        if query.with_document:
            # The document must be the chunk's own and of the same tenant: both keys, always.
            parts.append(sql.SQL(" JOIN {} AS d ON d.id = c.document_id AND d.tenant_id = c.tenant_id").format(
                sql.Identifier("corpus_document")))
        if query.lateral is not None:
            parts.append(sql.SQL(" CROSS JOIN LATERAL {}").format(query.lateral))
        parts.append(sql.SQL(" WHERE ({})").format(self._predicate()))
        if query.where is not None:
            parts.append(sql.SQL(" AND ({})").format(query.where))
        if query.group_by is not None:
            parts.append(sql.SQL(" GROUP BY c.tenant_id, c.id, {}").format(query.group_by))
        if query.order_by is not None:
            parts.append(sql.SQL(" ORDER BY {}").format(query.order_by))
        if query.limit is not None:
            parts.append(sql.SQL(" LIMIT {}").format(sql.Literal(query.limit)))
        return sql.Composed(parts)

    # -- running -------------------------------------------------------------------------
    def rls_context(self) -> Any:
        """A transaction with the RLS settings of this scope, cleared again on the way out."""
        return rls_transaction(tenant_id=self.tenant_id, audience_ids=self.audience_ids, using=self.using)

    def _read(self, statement: str, params: Mapping[str, Any],
              local_settings: Mapping[str, str] | None = None) -> tuple[list[str], list[tuple[Any, ...]]]:
        return scoped_read(tenant_id=self.tenant_id, audience_ids=self.audience_ids, statement=statement,
                           params={**params, **self._params()}, local_settings=local_settings, using=self.using)

    def fetch(self, query: ChunkQuery) -> list[dict[str, Any]]:
        columns, found = self._read(self.compose(query).as_string(None), query.params, query.local_settings)
        rows = [dict(zip(columns, row)) for row in found]
        self._tripwire(rows)
        for row in rows:
            del row["_scope_tenant"], row["_scope_audience"]
            row["archived"] = row.pop("_scope_archived")
        return rows

    # -- derived data: word statistics and vocabulary ------------------------------------
    def _stats_rows(self, statement: str, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        """Run a statistics read; the weld and the tripwire are the same as for chunk text."""
        weld = "s.tenant_id = %(_scope_tenant)s AND s.audience_id = ANY(%(_scope_audiences)s)"
        # The % operator prunes by this threshold inside the trigram index; the default 0.3 lets
        # far more terms through to similarity() than the caller will keep.
        threshold = {"pg_trgm.similarity_threshold": str(params["th"])} if "th" in params else None
        _, rows = self._read(statement.replace("{weld}", weld), params, threshold)
        allowed = set(self.audience_ids)
        for row in rows:
            tenant_id, audience_id = row[0], row[1]
            if tenant_id != self.tenant_id or audience_id not in allowed:
                raise ScopeViolation(f"statistics row of tenant {tenant_id}/audience {audience_id} "
                                     f"returned to a scope of tenant {self.tenant_id}, audiences {sorted(allowed)}")
        return rows

    def document_frequencies(self, terms: Sequence[str]) -> dict[str, int]:
        """Live chunks containing each term, among the chunks this scope may read."""
        if not terms:
            return {}
        # Index: corpus_term_stats primary key (tenant_id, audience_id, term).
        rows = self._stats_rows(
            "SELECT s.tenant_id, s.audience_id, s.term, s.df FROM corpus_term_stats s"
            " WHERE {weld} AND s.term = ANY(%(terms)s)",
            {"terms": list(terms)},
        )
        return _summed_by_term(rows)

    def terms_matching(self, pattern: str) -> dict[str, int]:
        """Vocabulary terms this scope may read that match a regular expression (POSIX, whole
        term when anchored), with the live chunks holding each."""
        # Index: corpus_term_stats_trgm_idx (gin_trgm_ops) serves the regular expression.
        rows = self._stats_rows(
            "SELECT s.tenant_id, s.audience_id, s.term, s.df FROM corpus_term_stats s"
            " WHERE {weld} AND s.term ~ %(pattern)s",
            {"pattern": pattern},
        )
        return _summed_by_term(rows)

    def corpus_totals(self) -> tuple[int, int]:
        """(live chunks, total term occurrences) visible to this scope: BM25's N and avgdl."""
        rows = self._stats_rows(
            "SELECT s.tenant_id, s.audience_id, s.chunk_count, s.term_total FROM corpus_audience_stats s WHERE {weld}",
            {},
        )
        return sum(r[2] for r in rows), sum(r[3] for r in rows)

    def table_rows(self) -> int:
        """The planner's estimate of the whole chunk table's rows (all tenants; no row is read).

        A count of nobody's data: the vector leg weighs an exact scan of this scope's chunks
        against an HNSW scan that visits about limit x table/visible rows to keep `limit`.
        """
        with connections[self.using].cursor() as cursor:
            cursor.execute("SELECT greatest(reltuples, 0)::bigint FROM pg_class WHERE oid = %s::regclass",
                           [CHUNK_TABLE])
            row = cursor.fetchone()
        return int(row[0]) if row else 0

    def similar_terms(self, term: str, *, limit: int = 3, threshold: float = 0.4) -> list[tuple[str, float, int]]:
        """Vocabulary terms this scope may read that look like `term` (pg_trgm), best first."""
        # Index: corpus_term_stats_trgm_idx (gin_trgm_ops) serves the % operator.
        rows = self._stats_rows(
            "SELECT s.tenant_id, s.audience_id, s.term, s.df, similarity(s.term, %(w)s) AS sim"
            " FROM corpus_term_stats s WHERE {weld} AND s.term %% %(w)s AND similarity(s.term, %(w)s) >= %(th)s",
            {"w": term, "th": threshold},
        )
        best: dict[str, tuple[float, int]] = {}
        for _, _, found, df, similarity in rows:
            sim, total = best.get(found, (similarity, 0))
            best[found] = (sim, total + df)
        ranked = sorted(best.items(), key=lambda item: (-item[1][0], -item[1][1], item[0]))
        return [(found, sim, df) for found, (sim, df) in ranked[:limit]]

    def terms_with_part(self, word: str, *, limit: int = 1) -> list[tuple[str, int]]:
        """Terms holding `word` (lower case) as one dotted part, most frequent first:
        `databasecache` in `django.core.cache.backends.db.databasecache`. PostgreSQL's parser
        keeps such an identifier as one host token, so the part alone is no term of its own.
        Exact identifiers (`=…`) are left out, as typo correction does."""
        # Index: corpus_term_stats_dotted_idx, partial on exactly these two conditions: the
        # expression is then matched against the scope's dotted terms only (0129).
        rows = self._stats_rows(
            "SELECT s.tenant_id, s.audience_id, s.term, s.df FROM corpus_term_stats s"
            " WHERE {weld} AND s.term LIKE '%%.%%' AND left(s.term, 1) <> '=' AND s.term ~ %(pattern)s",
            {"pattern": r"(^|\.)" + re.escape(word) + r"($|\.)"},
        )
        totals: dict[str, int] = {}
        for _, _, term, df in rows:
            totals[term] = totals.get(term, 0) + df
        return sorted(totals.items(), key=lambda item: (-item[1], item[0]))[:limit]

    def lock_live(self, cursor: Any, chunk_ids: Sequence[int]) -> dict[int, bool]:
        """The live chunks among these (id → contested), each locked FOR SHARE until the caller's
        transaction ends. For data derived from chunks that must not outlive them (the answer
        cache): a writer retiring one either committed first (its id is missing here) or waits
        for the caller's commit, and its after-commit invalidation then sees the caller's rows.
        NOWAIT: a chunk an uncommitted write holds raises LockNotAvailable, so the caller never
        waits on a writer (no deadlock). Runs in the caller's transaction, which must carry this
        scope's settings (rls_context())."""
        if not chunk_ids:
            return {}
        # Index: corpus_chunk primary key (id).
        statement = sql.SQL("{} ORDER BY c.id FOR SHARE OF c NOWAIT").format(self.compose(ChunkQuery(
            select=sql.SQL("c.id, c.contested"), where=sql.SQL("c.id = ANY(%(ids)s)"))))
        cursor.execute(statement.as_string(None), {"ids": sorted(set(chunk_ids)), **self._params()})
        columns = [col.name for col in cursor.description]
        rows = [dict(zip(columns, row)) for row in cursor.fetchall()]
        self._tripwire(rows)
        return {int(row["id"]): bool(row["contested"]) for row in rows}

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


def _summed_by_term(rows: Sequence[tuple[Any, ...]]) -> dict[str, int]:
    """(tenant, audience, term, df) rows → term → live chunks over the scope's audiences."""
    frequencies: dict[str, int] = {}
    for _, _, term, df in rows:
        frequencies[term] = frequencies.get(term, 0) + df
    return frequencies
