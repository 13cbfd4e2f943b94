"""ChunkWriter: the only code that writes chunk rows and their BM25 statistics.

The counterpart of tenants.scope (which alone reads them; the table names come from there).
A writer sees every audience of its own tenant and nothing of any other: it runs inside
`rls_transaction(all_audiences=True)`, the RLS policies' WITH CHECK refuses a foreign row,
and every row a statement touches comes back with its tenant, which must be the writer's
(a ScopeViolation otherwise).
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import psycopg
from django.conf import settings
from psycopg import sql

from config.stageclock import stage
from tenants.rls import rls_transaction
from tenants.scope import AUDIENCE_STATS_TABLE, CHUNK_TABLE, TERM_STATS_TABLE, ScopeViolation


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
    exact_terms: Sequence[str] = ()
    language_keys: str | None = None  # a tsvector literal (corpus/language/keys.py); None: ts_config's
    token_states: bytes | None = None  # corpus/encoders/token_states.py's packed rows; None: not stored


@dataclass(frozen=True)
class ChunkColumns:
    """Chunk rows as columns (one sequence per field, all of one length) for a bulk insert.

    The ingest builds these directly: a row object per chunk is Python work on the writer
    thread that the encoder would wait for.
    """

    document_id: Sequence[int]
    audience_id: Sequence[int]
    ordinal: Sequence[int]
    heading_path: Sequence[str]
    content: Sequence[str]
    page: Sequence[int | None]
    token_count: Sequence[int]
    embedding: np.ndarray | Sequence[Sequence[float] | np.ndarray]
    ts_config: Sequence[str]
    contested: Sequence[bool]
    context_blurb: Sequence[str]
    exact_terms: Sequence[Sequence[str]]
    # Per row a tsvector literal of Python-computed keys, or None (empty: None for every row).
    language_keys: Sequence[str | None] = ()
    # Per row the packed token states (corpus/encoders/token_states.py), or None (empty: None for every row).
    token_states: Sequence[bytes | None] = ()
    # The encoder that computed `embedding` (its identity); empty: this process's configured MiniLM.
    encoder: str = ""

    @classmethod
    def from_rows(cls, rows: Sequence[ChunkRow]) -> ChunkColumns:
        return cls(
            document_id=[r.document_id for r in rows],
            audience_id=[r.audience_id for r in rows],
            ordinal=[r.ordinal for r in rows],
            heading_path=[r.heading_path for r in rows],
            content=[r.content for r in rows],
            page=[r.page for r in rows],
            token_count=[r.token_count for r in rows],
            embedding=[np.asarray(r.embedding, dtype=np.float32) for r in rows],
            ts_config=[r.ts_config for r in rows],
            contested=[r.contested for r in rows],
            context_blurb=[r.context_blurb for r in rows],
            exact_terms=[list(r.exact_terms) for r in rows],
            language_keys=[r.language_keys for r in rows],
            token_states=[r.token_states for r in rows],
        )


@dataclass(frozen=True)
class ChunkWriter:
    """Writes a tenant's chunk rows, inside the caller's transaction.

    Writers see every audience of their own tenant (ingest replaces internal documents too)
    and nothing of any other tenant: the RLS policy's WITH CHECK refuses a foreign row.
    """

    tenant_id: int
    using: str = "default"

    def rls_context(self) -> Any:
        return rls_transaction(tenant_id=self.tenant_id, all_audiences=True, using=self.using)

    def insert(self, cursor: Any, rows: Sequence[ChunkRow]) -> None:
        """Insert these rows (and count them into the BM25 statistics) in one statement."""
        self.insert_columns(cursor, ChunkColumns.from_rows(rows))

    def insert_columns(self, cursor: Any, columns: ChunkColumns) -> None:
        """Insert chunk rows given as columns, and add them to the BM25 statistics.

        Each column travels as one array and PostgreSQL unnests them, so the client builds a
        dozen lists instead of a tuple of parameters per row (the writer thread shares the GIL
        and both cores with the encoder). The statistics are then counted from the new rows,
        found by the ids the INSERT returned, in two INSERT ... SELECTs of the same tenant: three
        statements where one data-modifying CTE chain did it, because Citus plans such a chain
        apart through the coordinator while each of these routes to the tenant's shard
        (docs/decisions/0121). PostgreSQL refuses COPY into a table with row-level security; an
        INSERT passes WITH CHECK. An ingest's stage clock times the statistics apart.
        Vectors go as one vector[] in pgvector's binary format; each row's exact terms are a
        slice of one flat text[] (PostgreSQL arrays of arrays must be rectangular).
        """
        count = len(columns.document_id)
        if not count:
            return
        raw = cursor.cursor.connection if hasattr(cursor, "cursor") else cursor.connection
        _ensure_vector_type(raw)
        params = _column_params(tenant_id=self.tenant_id, columns=columns, count=count)
        with psycopg.Cursor(raw) as binary:  # server-side binding, which %b needs
            binary.execute(_INSERT_COLUMNS, params)
            ids = self._ids(binary.fetchall())
        with stage("statistics"):
            self._count_statistics(cursor, "c.id = ANY(%(ids)s)", {"ids": ids})

    def other_encoder(self, cursor: Any, encoder: str) -> str | None:
        """An encoder other than `encoder` that wrote some of this tenant's vectors, or None."""
        # corpus_chunk_tenant_encoder_idx (tenant_id, encoder): stops at the first such row.
        cursor.execute(sql.SQL("SELECT encoder FROM {} WHERE tenant_id = %(t)s AND encoder <> %(e)s LIMIT 1")
                       .format(sql.Identifier(CHUNK_TABLE)).as_string(None), {"t": self.tenant_id, "e": encoder})
        row = cursor.fetchone()
        return str(row[0]) if row else None

    def count_stale(self, cursor: Any, encoder: str, *, want_states: bool = False) -> int:
        """How many of this tenant's chunks hold a vector of another encoder than `encoder`, or
        (want_states) no token states where they could have them (no context blurb)."""
        # corpus_chunk_tenant_encoder_idx (tenant_id, encoder); the states test reads each row.
        cursor.execute(sql.SQL("SELECT count(*) FROM {} WHERE tenant_id = %(t)s AND {}")
                       .format(sql.Identifier(CHUNK_TABLE), _stale(want_states)).as_string(None),
                       {"t": self.tenant_id, "e": encoder})
        return int(cursor.fetchone()[0])

    def stale_window(self, cursor: Any, encoder: str, limit: int, *,
                     want_states: bool = False) -> list[tuple[int, str, str]]:
        """Up to `limit` chunks count_stale counts: (id, context blurb, content), locked until the
        caller's transaction ends."""
        # corpus_chunk_tenant_encoder_idx finds the stale rows; by id so two windows never overlap.
        cursor.execute(sql.SQL("SELECT id, tenant_id, context_blurb, content FROM {} WHERE tenant_id = %(t)s"
                               " AND {} ORDER BY id LIMIT %(n)s FOR UPDATE")
                       .format(sql.Identifier(CHUNK_TABLE), _stale(want_states)).as_string(None),
                       {"t": self.tenant_id, "e": encoder, "n": limit})
        rows = cursor.fetchall()
        self._ids([(r[0], r[1]) for r in rows])
        return [(int(r[0]), str(r[2]), str(r[3])) for r in rows]

    def set_embeddings(self, cursor: Any, chunk_ids: Sequence[int], vectors: np.ndarray, encoder: str,
                       token_states: Sequence[bytes | None] = ()) -> None:
        """Replace these chunks' vectors and token states with `encoder`'s (the text and its
        statistics stay). States of the old encoder never outlive its vectors: None clears them."""
        raw = cursor.cursor.connection if hasattr(cursor, "cursor") else cursor.connection
        _ensure_vector_type(raw)
        with psycopg.Cursor(raw) as binary:  # server-side binding, which %b needs
            # corpus_chunk_pkey (tenant_id, id) finds each row.
            binary.execute(sql.SQL("UPDATE {} c SET embedding = r.embedding, token_states = r.states, encoder = %(e)s"
                                   " FROM unnest(%(ids)s::bigint[], %(v)b::vector[], %(s)b::bytea[])"
                                   " AS r(id, embedding, states)"
                                   " WHERE c.tenant_id = %(t)s AND c.id = r.id")
                           .format(sql.Identifier(CHUNK_TABLE)),
                           {"t": self.tenant_id, "e": encoder, "ids": list(chunk_ids),
                            "v": list(np.asarray(vectors, dtype=np.float32)),
                            "s": list(token_states) or [None] * len(chunk_ids)})

    def states_window(self, cursor: Any, encoder: str, limit: int, *, after: int,
                      not_prefixed: bytes) -> list[tuple[int, bytes]]:
        """Up to `limit` chunks past id `after` whose stored states (written by `encoder`) do
        not start with `not_prefixed`: (id, blob), locked until the caller's transaction ends."""
        # corpus_chunk_pkey (tenant_id, id) walks the tenant by id; the prefix is read from each
        # row's out-of-line value as a 4-byte slice (STORAGE EXTERNAL: no whole-blob fetch).
        cursor.execute(sql.SQL("SELECT id, tenant_id, token_states FROM {} WHERE tenant_id = %(t)s AND id > %(after)s"
                               " AND encoder = %(e)s AND token_states IS NOT NULL"
                               " AND substring(token_states FROM 1 FOR %(n_prefix)s) <> %(prefix)s"
                               " ORDER BY id LIMIT %(n)s FOR UPDATE")
                       .format(sql.Identifier(CHUNK_TABLE)).as_string(None),
                       {"t": self.tenant_id, "after": after, "e": encoder, "prefix": not_prefixed,
                        "n_prefix": len(not_prefixed), "n": limit})
        rows = cursor.fetchall()
        self._ids([(r[0], r[1]) for r in rows])
        return [(int(r[0]), bytes(r[2])) for r in rows]

    def set_token_states(self, cursor: Any, chunk_ids: Sequence[int], blobs: Sequence[bytes]) -> None:
        """Replace these chunks' stored states (their vectors and encoder stay)."""
        raw = cursor.cursor.connection if hasattr(cursor, "cursor") else cursor.connection
        with psycopg.Cursor(raw) as binary:  # server-side binding, which %b needs
            # corpus_chunk_pkey (tenant_id, id) finds each row.
            binary.execute(sql.SQL("UPDATE {} c SET token_states = r.states"
                                   " FROM unnest(%(ids)s::bigint[], %(s)b::bytea[]) AS r(id, states)"
                                   " WHERE c.tenant_id = %(t)s AND c.id = r.id")
                           .format(sql.Identifier(CHUNK_TABLE)),
                           {"t": self.tenant_id, "ids": list(chunk_ids), "s": list(blobs)})

    def delete_for_documents(self, cursor: Any, document_ids: Sequence[int]) -> list[int]:
        """Delete the chunks of these documents and return their ids (for cache invalidation)."""
        self._adjust_statistics(cursor, document_ids, -1)
        cursor.execute(
            sql.SQL("DELETE FROM {} WHERE tenant_id = %(t)s AND document_id = ANY(%(d)s) RETURNING id, tenant_id")
            .format(sql.Identifier(CHUNK_TABLE))
            .as_string(None),
            {"t": self.tenant_id, "d": list(document_ids)},
        )
        return self._ids(cursor.fetchall())

    def set_archived(self, cursor: Any, document_ids: Sequence[int], archived: bool) -> list[int]:
        if archived:
            self._adjust_statistics(cursor, document_ids, -1)  # while they still count as live
        cursor.execute(
            sql.SQL(
                "UPDATE {} SET archived = %(a)s WHERE tenant_id = %(t)s AND document_id = ANY(%(d)s)"
                " RETURNING id, tenant_id"
            )
            .format(sql.Identifier(CHUNK_TABLE))
            .as_string(None),
            {"a": archived, "t": self.tenant_id, "d": list(document_ids)},
        )
        ids = self._ids(cursor.fetchall())
        if not archived:
            self._adjust_statistics(cursor, document_ids, +1)
        return ids

    def _adjust_statistics(self, cursor: Any, document_ids: Sequence[int], sign: int) -> None:
        """Add (+1) or remove (-1) these documents' live chunks to the BM25 statistics.

        Runs in the writer's transaction, so text and statistics never disagree; ingests of a
        tenant are serialised (corpus.ingest.store.tenant_ingest_lock), so increments never race.
        """
        if sign > 0:
            self._count_statistics(cursor, "c.document_id = ANY(%(d)s)", {"d": list(document_ids)})
            return
        # Decrements are UPDATEs: an INSERT … ON CONFLICT would test its negative
        # proposed row against the CHECK (df >= 0) before ever reaching the update.
        live = "WHERE c.tenant_id = %(t)s AND c.document_id = ANY(%(d)s) AND NOT c.archived"
        self._run(cursor, [
            "UPDATE {terms} s SET df = s.df - x.n FROM (SELECT c.audience_id, u.lexeme, count(*) AS n"
            " FROM {chunk} c, unnest(c.tsv) u " + live + " GROUP BY 1, 2) x"
            " WHERE s.tenant_id = %(t)s AND s.audience_id = x.audience_id AND s.term = x.lexeme",
            "UPDATE {totals} s SET chunk_count = s.chunk_count - x.n, term_total = s.term_total - x.total"
            " FROM (SELECT c.audience_id, count(*) AS n, coalesce(sum(c.term_count), 0) AS total"
            " FROM {chunk} c " + live + " GROUP BY 1) x"
            " WHERE s.tenant_id = %(t)s AND s.audience_id = x.audience_id",
            "DELETE FROM {terms} WHERE tenant_id = %(t)s AND df = 0",
        ], {"d": list(document_ids)})

    def _count_statistics(self, cursor: Any, chunks: str, params: dict[str, Any]) -> None:
        """Add the live chunks of this tenant that `chunks` selects (a condition on `c`) to the statistics."""
        live = "WHERE c.tenant_id = %(t)s AND " + chunks + " AND NOT c.archived"
        self._run(cursor, [
            "INSERT INTO {terms} AS s (tenant_id, audience_id, term, df)"
            " SELECT c.tenant_id, c.audience_id, u.lexeme, count(*) FROM {chunk} c, unnest(c.tsv) u " + live +
            " GROUP BY 1, 2, 3 ON CONFLICT (tenant_id, audience_id, term) DO UPDATE SET df = s.df + EXCLUDED.df",
            "INSERT INTO {totals} AS s (tenant_id, audience_id, chunk_count, term_total)"
            " SELECT c.tenant_id, c.audience_id, count(*), coalesce(sum(c.term_count), 0) FROM {chunk} c " + live +
            " GROUP BY 1, 2 ON CONFLICT (tenant_id, audience_id) DO UPDATE"
            " SET chunk_count = s.chunk_count + EXCLUDED.chunk_count, term_total = s.term_total + EXCLUDED.term_total",
        ], params)

    def _run(self, cursor: Any, statements: Sequence[str], params: dict[str, Any]) -> None:
        names = {"chunk": sql.Identifier(CHUNK_TABLE), "terms": sql.Identifier(TERM_STATS_TABLE),
                 "totals": sql.Identifier(AUDIENCE_STATS_TABLE)}
        for statement in statements:
            cursor.execute(sql.SQL(statement).format(**names).as_string(None), {"t": self.tenant_id, **params})

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


def _stale(want_states: bool) -> sql.Composable:
    if want_states:
        return sql.SQL("(encoder <> %(e)s OR (token_states IS NULL AND context_blurb = ''))")
    return sql.SQL("encoder <> %(e)s")


def configured_encoder() -> str:
    """The encoder whose vectors this process writes: the one corpus.encoders.embedding loads from the
    same settings (its `encoder_identity`); every row records it, so a tenant's vectors never
    silently come from two encoders (docs/decisions/0047)."""
    return f"{settings.EMBEDDING_MODEL_NAME}:{settings.EMBEDDING_BACKEND}"


# What ChunkWriter.insert_columns sends; its docstring says why it has this shape.
_INSERT_COLUMNS = sql.SQL(
    "INSERT INTO {chunk} (tenant_id, document_id, audience_id, ordinal, heading_path, content, page,"
    " token_count, embedding, ts_config, contested, context_blurb, exact_terms, language_keys, encoder,"
    " token_states)"
    " SELECT %(t)s, r.document_id, r.audience_id, r.ordinal, r.heading_path, r.content, r.page,"
    " r.token_count, r.embedding, r.ts_config::regconfig, r.contested, r.context_blurb,"
    " coalesce((%(terms)s::text[])[r.term_end - r.term_n + 1 : r.term_end], '{{}}'), r.language_keys::tsvector,"
    " %(encoder)s, r.token_states"
    " FROM unnest(%(document_id)s::bigint[], %(audience_id)s::bigint[], %(ordinal)s::integer[],"
    " %(heading_path)s::text[], %(content)s::text[], %(page)s::integer[], %(token_count)s::integer[],"
    " %(embedding)b::vector[], %(ts_config)s::text[], %(contested)s::boolean[], %(context_blurb)s::text[],"
    " %(term_end)s::integer[], %(term_n)s::integer[], %(language_keys)s::text[], %(token_states)b::bytea[])"
    " AS r(document_id, audience_id, ordinal, heading_path, content, page, token_count, embedding,"
    " ts_config, contested, context_blurb, term_end, term_n, language_keys, token_states)"
    " RETURNING id, tenant_id"
).format(chunk=sql.Identifier(CHUNK_TABLE))


def _column_params(*, tenant_id: int, columns: ChunkColumns, count: int) -> dict[str, Any]:
    flat_terms: list[str] = []
    term_ends: list[int] = []
    for terms in columns.exact_terms:
        flat_terms.extend(terms)
        term_ends.append(len(flat_terms))
    vectors = np.asarray(columns.embedding, dtype=np.float32)
    if vectors.shape[0] != count:
        raise ValueError(f"{vectors.shape[0]} embeddings for {count} chunk rows")
    return {
        "t": tenant_id,
        "document_id": list(columns.document_id),
        "audience_id": list(columns.audience_id),
        "ordinal": list(columns.ordinal),
        "heading_path": list(columns.heading_path),
        "content": list(columns.content),
        "page": list(columns.page),
        "token_count": list(columns.token_count),
        "embedding": list(vectors),
        "ts_config": list(columns.ts_config),
        "contested": list(columns.contested),
        "context_blurb": list(columns.context_blurb),
        "term_end": term_ends,
        "term_n": [len(terms) for terms in columns.exact_terms],
        "terms": flat_terms,
        "language_keys": list(columns.language_keys) or [None] * count,
        "token_states": list(columns.token_states) or [None] * count,
        "encoder": columns.encoder or configured_encoder(),
    }


_VECTOR_READY: weakref.WeakSet[Any] = weakref.WeakSet()


def _ensure_vector_type(raw: Any) -> None:
    """Teach this psycopg connection pgvector's binary format, once per connection."""
    if raw not in _VECTOR_READY:
        from pgvector.psycopg import register_vector

        register_vector(raw)
        _VECTOR_READY.add(raw)
