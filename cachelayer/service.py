"""The answer cache. Its failure mode is an answer written for a different question: silent,
durable, and indistinguishable from a hallucination. So:

- it sits AFTER query rewriting: "What about the backoff?" is keyed by what it means in its
  conversation, never by its four words;
- the key holds the tenant, the asker's exact audience set, the generator configuration and the
  encoder that embedded the question (a tenant whose encoder changes never compares vectors of
  two; docs/decisions/0112);
- a semantic hit needs cosine >= 0.95 between rewritten queries, and any query carrying an
  identifier (codes, versions, numbers, emails) skips the semantic path on read AND write:
  E1042 and E1043 embed almost identically;
- abstentions are never stored; entries record the chunks they were built from, and the
  ingest hook deletes exactly those entries after the commit; the TTL is only a backstop;
- an entry is stored only if every chunk it was built from is still live (and as contested as
  the generator saw it) at commit time, under a share lock on those rows: an ingest that
  retired one while the model was writing committed first (nothing is stored) or waits for
  this commit (and its hook then deletes the entry) (docs/decisions/0036);
- row-level security admits an entry only to askers who may read every audience it was built for.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass
from datetime import timedelta
from decimal import Decimal
from typing import Any

import numpy as np
from django.db import OperationalError
from django.utils import timezone
from psycopg import errors as pg_errors

from cachelayer.config import CacheConfig
from corpus.encoders.embedding import UNSCALED, Encoder, configured_identity
from corpus.encoders.embedding import vector_literal as vector_text
from tenants.rls import rls_transaction, set_local
from tenants.scope import TenantScope

_IDENTIFIER = re.compile(
    r"\d|@|\b[A-Za-z]+[-_][A-Za-z0-9]+\b|\b[A-Z]{2,}[0-9]|#\w+|\bv\d", re.IGNORECASE
)


def normalise(query: str) -> str:
    text = unicodedata.normalize("NFKC", query).casefold()
    text = re.sub(r"[\s]+", " ", text).strip()
    return text.rstrip("?!.。 ").strip()


def has_identifier(query: str) -> bool:
    """Deliberately broad: a false positive costs one cache miss, a false negative a wrong answer."""
    return bool(_IDENTIFIER.search(query))


def generator_key(generator: str, context_chunks: int, encoder: Encoder | None = None) -> str:
    # v2: documents escaped inside per-request boundaries (0036); v1 answers were written without them.
    identity = encoder.identity if encoder is not None else configured_identity()
    return f"{generator}|prompt-v2|ctx{context_chunks}|{identity}"


@dataclass(frozen=True)
class CacheHit:
    entry_id: int
    kind: str  # exact | semantic
    similarity: float
    answer: str
    sources: list[dict[str, Any]]
    conflict: bool
    generator: str
    provider: str
    model: str
    original_trace_id: int | None
    original_cost_usd: float


_COLUMNS = ("id, answer, sources, conflict, generator, provider, model, original_trace_id, original_cost_usd, "
            "tenant_id, audience_ids")


def _hit(row: tuple[Any, ...], kind: str, similarity: float, tenant_id: int, audiences: list[int]) -> CacheHit:
    if row[9] != tenant_id or sorted(row[10]) != audiences:
        # Same policy as the chunk scope: a foreign entry is a crash, never a quiet skip.
        raise RuntimeError(f"cache entry {row[0]} of tenant {row[9]}/{row[10]} reached {tenant_id}/{audiences}")
    # Django's connection hands jsonb back as text; the ORM decodes it in fields, raw SQL here.
    sources = json.loads(row[2]) if isinstance(row[2], str) else row[2]
    return CacheHit(entry_id=row[0], kind=kind, similarity=similarity, answer=row[1], sources=sources,
                    conflict=row[3], generator=row[4], provider=row[5], model=row[6], original_trace_id=row[7],
                    original_cost_usd=float(row[8]))


def lookup(*, tenant_id: int, audience_ids: Sequence[int], query: str, query_vector: np.ndarray,
           generator: str, config: CacheConfig | None = None, encoder: Encoder | None = None) -> CacheHit | None:
    """`config`: the flow's (answering.pipeline.config); a direct caller that passes none gets settings'.
    `encoder`: the tenant's, which embedded `query_vector`; none is the configured MiniLM."""
    config = config or CacheConfig.from_settings()
    audiences = sorted(audience_ids)
    key = generator_key(generator, config.context_chunks, encoder)
    norm = normalise(query)
    with rls_transaction(tenant_id=tenant_id, audience_ids=audiences) as cursor:
        # Index: cachelayer_entry_key_uniq (tenant_id, audience_ids, generator_key, query_norm).
        cursor.execute(
            f"SELECT {_COLUMNS} FROM cachelayer_entry WHERE tenant_id = %(t)s AND audience_ids = %(a)s::bigint[]"
            " AND generator_key = %(g)s AND query_norm = %(q)s AND expires_at > now()",
            {"t": tenant_id, "a": audiences, "g": key, "q": norm},
        )
        row = cursor.fetchone()
        hit = _hit(row, "exact", 1.0, tenant_id, audiences) if row else None
        if hit is None and not has_identifier(query):
            set_local(cursor, {"hnsw.iterative_scan": "relaxed_order"})
            # Index: cachelayer_entry_embedding_hnsw (cosine), filtered by tenant, audiences, generator.
            cursor.execute(
                f"SELECT {_COLUMNS}, 1 - (query_embedding <=> %(v)s::vector) AS similarity FROM cachelayer_entry"
                " WHERE tenant_id = %(t)s AND audience_ids = %(a)s::bigint[] AND generator_key = %(g)s"
                " AND NOT has_identifier AND expires_at > now()"
                " ORDER BY query_embedding <=> %(v)s::vector LIMIT 1",
                {"t": tenant_id, "a": audiences, "g": key, "v": vector_text(query_vector)},
            )
            row = cursor.fetchone()
            scale = encoder.scale if encoder is not None else UNSCALED
            if row and scale(float(row[-1])) >= config.semantic_min_similarity:
                hit = _hit(row, "semantic", float(scale(float(row[-1]))), tenant_id, audiences)
        if hit is not None:
            # The tenant as well as the id: on Citus it routes the update to one shard.
            cursor.execute("UPDATE cachelayer_entry SET hits = hits + 1, last_hit_at = now()"
                           " WHERE tenant_id = %s AND id = %s", [tenant_id, hit.entry_id])
    return hit


@dataclass(frozen=True)
class Stored:
    """What a store did: the new entry's id, or why nothing was stored."""

    entry_id: int | None
    skipped: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


BUSY = "a chunk it was built from is being rewritten by an ingest that has not committed"


def store(*, tenant_id: int, audience_ids: Sequence[int], query: str, query_vector: np.ndarray, generator: str,
          answer: str, sources: list[dict[str, Any]], conflict: bool, provider: str, model: str,
          trace_id: int | None, cost_usd: float, chunk_ids: Sequence[int],
          contested_ids: Collection[int] = (), config: CacheConfig | None = None,
          encoder: Encoder | None = None) -> Stored:
    """Store an answered (never an abstained) result built from `chunk_ids`, of which the
    generator saw `contested_ids` contested. Nothing is stored unless all of them are still
    live and as contested; identical concurrent stores keep one row. `config` as lookup()'s."""
    config = config or CacheConfig.from_settings()
    audiences = sorted(audience_ids)
    cited = sorted(set(chunk_ids))
    scope = TenantScope(tenant_id=tenant_id, audience_ids=tuple(audiences))
    try:
        with rls_transaction(tenant_id=tenant_id, audience_ids=audiences) as cursor:
            reason = _why_stale(cited, set(contested_ids), _live_chunks(cursor, scope=scope, chunk_ids=cited))
            if reason:
                return Stored(None, reason)
            entry_id = _insert(cursor, tenant_id=tenant_id, audiences=audiences, query=query,
                               query_vector=query_vector, generator=generator, answer=answer, sources=sources,
                               conflict=conflict, provider=provider, model=model, trace_id=trace_id,
                               cost_usd=cost_usd, chunk_ids=cited, config=config, encoder=encoder)
    except OperationalError as exc:
        if not isinstance(exc.__cause__, pg_errors.LockNotAvailable):
            raise
        return Stored(None, BUSY)
    return Stored(entry_id, "" if entry_id is not None else "duplicate")


def _live_chunks(cursor: Any, *, scope: TenantScope, chunk_ids: Sequence[int]) -> dict[int, bool]:
    """Live chunks among these (id → contested), share-locked until this transaction ends."""
    return scope.lock_live(cursor, chunk_ids)


def _why_stale(cited: Sequence[int], contested: set[int], live: dict[int, bool]) -> str:
    retired = [c for c in cited if c not in live]
    if retired:
        return f"chunks {retired[:5]} it was built from were retired before it could be stored"
    changed = [c for c in cited if live[c] != (c in contested)]
    if changed:
        return f"chunks {changed[:5]} it was built from were contested after it was generated"
    return ""


def _insert(cursor: Any, *, tenant_id: int, audiences: list[int], query: str, query_vector: np.ndarray,
            generator: str, answer: str, sources: list[dict[str, Any]], conflict: bool, provider: str, model: str,
            trace_id: int | None, cost_usd: float, chunk_ids: Sequence[int], config: CacheConfig,
            encoder: Encoder | None) -> int | None:
    # Index: cachelayer_entry_key_uniq (tenant_id, audience_ids, generator_key, query_norm) for the conflict.
    cursor.execute(
        "INSERT INTO cachelayer_entry (tenant_id, audience_ids, generator_key, query_norm, query_embedding,"
        " has_identifier, answer, sources, conflict, generator, provider, model, original_trace_id,"
        " original_cost_usd, expires_at)"
        " VALUES (%(t)s, %(a)s::bigint[], %(g)s, %(q)s, %(v)s::vector, %(i)s, %(ans)s, %(s)s::jsonb, %(c)s, %(gen)s,"
        " %(p)s, %(m)s, %(tr)s, %(cost)s, %(exp)s)"
        " ON CONFLICT (tenant_id, audience_ids, generator_key, query_norm) DO NOTHING RETURNING id",
        {"t": tenant_id, "a": audiences, "g": generator_key(generator, config.context_chunks, encoder), "q": normalise(query),
         "v": vector_text(query_vector), "i": has_identifier(query), "ans": answer,
         "s": _json(sources), "c": conflict, "gen": generator, "p": provider, "m": model, "tr": trace_id,
         "cost": Decimal(str(round(cost_usd, 6))),
         "exp": timezone.now() + timedelta(seconds=config.ttl_seconds)},
    )
    row = cursor.fetchone()
    if row is None:
        return None  # a concurrent identical request stored it first
    cursor.executemany(
        "INSERT INTO cachelayer_entry_chunk (tenant_id, entry_id, chunk_id) VALUES (%s, %s, %s)"
        " ON CONFLICT DO NOTHING",
        [(tenant_id, row[0], chunk_id) for chunk_id in chunk_ids],
    )
    return int(row[0])


def _json(value: Any) -> str:
    return json.dumps(value, default=str)


def invalidate_chunks(*, tenant_id: int, chunk_ids: Sequence[int], document_ids: Sequence[int] = ()) -> int:
    """Delete exactly the entries built on these chunks (corpus calls this after its commit)."""
    if not chunk_ids:
        return 0
    with rls_transaction(tenant_id=tenant_id, all_audiences=True) as cursor:
        # Index: cachelayer_entry_chunk_chunk_idx (tenant_id, chunk_id).
        cursor.execute(
            "DELETE FROM cachelayer_entry WHERE tenant_id = %(t)s AND id IN ("
            " SELECT entry_id FROM cachelayer_entry_chunk WHERE tenant_id = %(t)s AND chunk_id = ANY(%(c)s))",
            {"t": tenant_id, "c": list(chunk_ids)},
        )
        deleted = cursor.rowcount
    return int(deleted)


def purge_tenant(*, tenant_id: int) -> int:
    with rls_transaction(tenant_id=tenant_id, all_audiences=True) as cursor:
        cursor.execute("DELETE FROM cachelayer_entry WHERE tenant_id = %s", [tenant_id])
        return int(cursor.rowcount)


def purge_entry(*, tenant_id: int, entry_id: int) -> int:
    with rls_transaction(tenant_id=tenant_id, all_audiences=True) as cursor:
        cursor.execute("DELETE FROM cachelayer_entry WHERE tenant_id = %s AND id = %s", [tenant_id, entry_id])
        return int(cursor.rowcount)


def purge_built_from(*, tenant_id: int, trace_ids: Sequence[int], queries: Sequence[str]) -> int:
    """Erasure: delete the entries written for these traces or filed under these questions
    (normalised as lookups normalise them), so a person's words leave the cache too."""
    norms = sorted({normalise(q) for q in queries if q and q.strip()})
    if not trace_ids and not norms:
        return 0
    with rls_transaction(tenant_id=tenant_id, all_audiences=True) as cursor:
        # Index: cachelayer_entry_key_uniq leads with tenant_id; one tenant's entries, a handful of keys.
        cursor.execute(
            "DELETE FROM cachelayer_entry WHERE tenant_id = %(t)s"
            " AND (original_trace_id = ANY(%(traces)s) OR query_norm = ANY(%(norms)s))",
            {"t": tenant_id, "traces": list(trace_ids), "norms": norms},
        )
        return int(cursor.rowcount)


def purge_created_before(*, tenant_id: int, before: Any) -> int:
    """Retention: entries older than the tenant's retention period go (their text is a question)."""
    with rls_transaction(tenant_id=tenant_id, all_audiences=True) as cursor:
        # Index: cachelayer_entry_key_uniq leads with tenant_id; one pass per retention run.
        cursor.execute("DELETE FROM cachelayer_entry WHERE tenant_id = %(t)s AND created_at < %(before)s",
                       {"t": tenant_id, "before": before})
        return int(cursor.rowcount)
