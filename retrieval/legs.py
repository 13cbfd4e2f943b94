"""The two retrieval legs, both as fragments handed to the tenant scope.

Vector: cosine distance over the HNSW index with pgvector 0.8 iterative scans, so a tenant
that owns 1% of the table still gets its k rows (a plain HNSW scan filters after the index
and can return 3 of 10). Keyword: Okapi BM25 computed inside PostgreSQL from the chunk's
tsvector (term frequencies, length) and the statistics kept at ingest (document frequency,
N, average length) over the asker's visible chunks only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db import connection
from psycopg import sql

from corpus.embedding import vector_literal as vector_text
from corpus.terms import exact_terms
from retrieval.querytext import clean_query
from tenants.scope import ChunkQuery, TenantScope


@dataclass(frozen=True)
class LegHit:
    chunk_id: int
    score: float


@dataclass(frozen=True)
class QueryTerms:
    lexemes: tuple[str, ...]  # stemmed with the tenant's text search configuration
    exact: tuple[str, ...]  # whole identifiers, `=`-prefixed

    @property
    def all(self) -> tuple[str, ...]:
        return self.lexemes + self.exact


def query_terms(text: str, *, ts_config: str) -> QueryTerms:
    """Lexemes exactly as ingest produced them: the same parser, stemmer and stop words."""
    # No tenant data is read here: to_tsvector over the question only.
    text = clean_query(text)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT u.lexeme FROM unnest(to_tsvector(%s::regconfig, %s)) AS u ORDER BY u.positions[1]",
            [ts_config, text],
        )
        lexemes = tuple(dict.fromkeys(row[0] for row in cursor.fetchall()))
    return QueryTerms(lexemes=lexemes, exact=tuple(exact_terms(text)))


def vector_leg(scope: TenantScope, query_vector: np.ndarray, *, limit: int) -> list[LegHit]:
    query = ChunkQuery(
        select=sql.SQL("c.id, 1 - (c.embedding <=> %(v)s::vector) AS similarity"),
        # Index: corpus_chunk_embedding_hnsw (vector_cosine_ops), scanned iteratively.
        order_by=sql.SQL("c.embedding <=> %(v)s::vector, c.id"),
        limit=limit,
        params={"v": vector_text(query_vector)},
        local_settings={
            "hnsw.iterative_scan": "relaxed_order",
            "hnsw.ef_search": str(settings.RETRIEVAL_HNSW_EF_SEARCH),
        },
    )
    rows = scope.fetch(query)
    # relaxed_order may return neighbours slightly out of order: sort by the true distance.
    rows.sort(key=lambda r: (-r["similarity"], r["id"]))
    return [LegHit(r["id"], float(r["similarity"])) for r in rows]


@dataclass(frozen=True)
class Bm25Stats:
    idf: dict[str, float]
    df: dict[str, int]
    chunk_count: int
    avg_length: float


def bm25_stats(scope: TenantScope, terms: Sequence[str]) -> Bm25Stats:
    df = scope.document_frequencies(list(terms))
    n, total = scope.corpus_totals()
    avg = total / n if n else 1.0
    # Robertson–Spärck Jones IDF with +1 inside the log, so it never goes negative.
    idf = {t: math.log(1 + (n - df.get(t, 0) + 0.5) / (df.get(t, 0) + 0.5)) for t in terms}
    return Bm25Stats(idf=idf, df=df, chunk_count=n, avg_length=avg)


# The chunk's tsvector restricted to the query's terms (positions kept, for term frequency).
_ONLY_TERMS = "ts_delete(c.tsv, tsvector_to_array(ts_delete(c.tsv, %(terms)s::text[])))"


def only_terms_sql(terms_param: str = "terms") -> str:
    """SQL text for the chunk's tsvector restricted to the lexemes in %(<terms_param>)s."""
    return _ONLY_TERMS.replace("%(terms)s", f"%({terms_param})s")


def _tsquery_any(terms: Sequence[str]) -> str:
    # Quoted lexemes are taken verbatim by the ::tsquery cast: no second stemming.
    return " | ".join("'" + t.replace("\\", "\\\\").replace("'", "''") + "'" for t in terms)


def keyword_leg(scope: TenantScope, terms: Sequence[str], stats: Bm25Stats, *, limit: int,
                ranking: str = "bm25") -> list[LegHit]:
    present = [t for t in terms if stats.df.get(t, 0) > 0]
    if not present:
        return []
    # Very common terms add to a chunk's score but do not nominate candidates on their own,
    # or "table" would drag half the manual through the scoring below.
    common_limit = settings.RETRIEVAL_BM25_COMMON_SHARE * stats.chunk_count
    # With only common terms, the two rarest nominate: scoring every chunk that contains
    # "configure" costs more than it could ever add to the ranking.
    selective = [t for t in present if stats.df[t] <= common_limit] or sorted(present, key=lambda t: stats.df[t])[:2]
    params = {
        "tsq": _tsquery_any(selective),
        "terms": list(present),
        "idfs": [stats.idf[t] for t in present],
        "k1": settings.RETRIEVAL_BM25_K1,
        "b": settings.RETRIEVAL_BM25_B,
        "avgdl": stats.avg_length,
    }
    if ranking == "ts_rank_cd":  # the baseline BM25 replaced; kept for the eval arm
        query = ChunkQuery(
            select=sql.SQL("c.id, ts_rank_cd(c.tsv, %(all)s::tsquery) AS score"),
            where=sql.SQL("c.tsv @@ %(tsq)s::tsquery"),
            order_by=sql.SQL("score DESC, c.id"),
            limit=limit,
            params={**params, "all": _tsquery_any(present)},
        )
    else:
        query = ChunkQuery(
            select=sql.SQL(
                "c.id, sum(w.idf * (coalesce(array_length(u.positions, 1), 1) * (%(k1)s + 1))"
                " / (coalesce(array_length(u.positions, 1), 1)"
                "    + %(k1)s * (1 - %(b)s + %(b)s * c.term_count / %(avgdl)s))) AS score"
            ),
            # Only the query's lexemes are unnested: ts_delete twice (C, linear) keeps the ≤ 10
            # query terms of an ~85-lexeme tsvector, which halves the leg's time on 1,300 candidates.
            lateral=sql.SQL(
                "unnest(" + _ONLY_TERMS + ") AS u"
                " JOIN unnest(%(terms)s::text[], %(idfs)s::float8[]) AS w(term, idf) ON w.term = u.lexeme"
            ),
            # Index: corpus_chunk_tsv_idx (GIN) finds the candidates; scoring reads their tsvector.
            where=sql.SQL("c.tsv @@ %(tsq)s::tsquery"),
            group_by=sql.SQL("c.term_count"),
            order_by=sql.SQL("score DESC, c.id"),
            limit=limit,
            params=params,
        )
    return [LegHit(r["id"], float(r["score"])) for r in scope.fetch(query)]
