"""Pseudo-relevance feedback for the vector leg: Rocchio's query moved towards what it found.

A question told in the asker's words ("my ids should count up by themselves") lands near the
pages' vocabulary only partly; the first search's best chunks are written in it. The vector
leg is asked again with

    q' = normalise(q + weight * mean(unit vectors of the first `depth` fused chunks))

and its list joins fusion (or replaces the first vector list). The question's own vector still
scores evidence, the gate and the reranker: feedback changes which candidates are seen, never
what counts as a match (docs/decisions/0079).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from psycopg import sql

from tenants.scope import ChunkQuery, TenantScope


def feedback_vector(scope: TenantScope, query_vector: np.ndarray, chunk_ids: Sequence[int], *,
                    weight: float) -> np.ndarray | None:
    """None when no feedback chunk is visible (an empty first search)."""
    if not chunk_ids:
        return None
    # Index: corpus_chunk_pkey (a handful of rows by primary key).
    rows = scope.fetch(ChunkQuery(select=sql.SQL("c.id, c.embedding::text AS embedding"),
                                  where=sql.SQL("c.id = ANY(%(ids)s)"), params={"ids": list(chunk_ids)}))
    if not rows:
        return None
    vectors = np.array([json.loads(r["embedding"]) for r in rows], dtype=np.float32)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
    query = query_vector / max(float(np.linalg.norm(query_vector)), 1e-9)
    moved = query + weight * vectors.mean(axis=0)
    return (moved / max(float(np.linalg.norm(moved)), 1e-9)).astype(np.float32)


@dataclass(frozen=True)
class Expansion:
    term: str
    weight: float  # the share of a question word's IDF it scores with


def expansion_terms(scope: TenantScope, chunk_ids: Sequence[int], *, asked: Sequence[str], count: int,
                    weight: float, chunk_count: int) -> list[Expansion]:
    """RM3's keyword side: the words the first fused chunks share, by their weight in those
    chunks times their IDF, that the question did not use. A word held by one chunk only says
    what that chunk is about, not what the question is about: at least two must hold it."""
    if not chunk_ids or count <= 0:
        return []
    # Index: corpus_chunk_pkey (a handful of rows by primary key); their tsvectors unnested.
    rows = scope.fetch(ChunkQuery(
        select=sql.SQL("c.id, c.term_count, u.lexeme, coalesce(array_length(u.positions, 1), 1) AS tf"),
        lateral=sql.SQL("unnest(c.tsv) AS u"),
        where=sql.SQL("c.id = ANY(%(ids)s)"), params={"ids": list(chunk_ids)}))
    held: dict[str, float] = {}
    chunks: dict[str, int] = {}
    for row in rows:
        lexeme = row["lexeme"]
        if lexeme in asked or len(lexeme) < 3 or not lexeme.isalpha():
            continue
        held[lexeme] = held.get(lexeme, 0.0) + row["tf"] / max(row["term_count"], 1)
        chunks[lexeme] = chunks.get(lexeme, 0) + 1
    shared = [t for t in held if chunks[t] >= 2]
    df = scope.document_frequencies(shared)
    score = {t: held[t] * math.log(1 + (chunk_count - df.get(t, 0) + 0.5) / (df.get(t, 0) + 0.5)) for t in shared}
    chosen = sorted(shared, key=lambda t: (-score[t], t))[:count]
    return [Expansion(t, weight) for t in chosen]
