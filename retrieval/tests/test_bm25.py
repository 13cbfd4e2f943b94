"""The keyword leg's BM25, recomputed in Python from the stored tsvectors: the SQL formula
(stemmed lexemes through setweight/ts_filter, exact identifiers through exact_terms) must give
the textbook number for every candidate, and must not score a chunk it has no term of."""

from __future__ import annotations

import math

import pytest
from psycopg import sql

from retrieval.legs import bm25_stats, keyword_leg, query_terms
from retrieval.tests.conftest import RetrievalWorld
from tenants.scope import ChunkQuery, TenantScope

QUESTION = "Error E1042: the key was revoked, create a new key for errors"


def reference_scores(scope: TenantScope, terms: tuple[str, ...]) -> dict[int, float]:
    rows = scope.fetch(ChunkQuery(
        select=sql.SQL("c.id AS chunk, u.lexeme AS lexeme, coalesce(array_length(u.positions, 1), 1) AS tf,"
                       " c.term_count AS length"),
        lateral=sql.SQL("unnest(c.tsv) AS u"),
    ))
    lengths = {r["chunk"]: r["length"] for r in rows}
    n, avgdl = len(lengths), sum(lengths.values()) / len(lengths)
    df: dict[str, int] = {}
    for r in rows:
        df[r["lexeme"]] = df.get(r["lexeme"], 0) + 1
    k1, b = 1.2, 0.75  # the textbook constants retrieval.legs uses
    scores: dict[int, float] = {}
    for r in rows:
        if r["lexeme"] not in terms:
            continue
        idf = math.log(1 + (n - df[r["lexeme"]] + 0.5) / (df[r["lexeme"]] + 0.5))
        tf, norm = r["tf"], k1 * (1 - b + b * r["length"] / avgdl)
        scores[r["chunk"]] = scores.get(r["chunk"], 0.0) + idf * tf * (k1 + 1) / (tf + norm)
    return scores


@pytest.mark.django_db
def test_bm25_equals_the_textbook_formula(retrieval_world: RetrievalWorld) -> None:
    w = retrieval_world
    scope = TenantScope(tenant_id=w.acme.tenant.id, audience_ids=(w.acme.public_id, w.acme.customer_id))
    terms = query_terms(QUESTION, ts_config="english")
    assert "=e1042" in terms.exact and "key" in terms.lexemes  # both kinds of term are exercised
    stats = bm25_stats(scope, terms.all)
    hits = keyword_leg(scope, terms.all, stats, limit=100)
    expected = reference_scores(scope, terms.all)
    assert hits, "the question's terms are in the corpus"
    assert {h.chunk_id for h in hits} <= set(expected)  # nothing scored without a query term
    for hit in hits:
        assert hit.score == pytest.approx(expected[hit.chunk_id], rel=1e-9), hit
    # The E1042 chunk has the identifier, "key" twice and "revok": it must lead.
    assert max(expected, key=expected.__getitem__) == hits[0].chunk_id


@pytest.mark.django_db
def test_forced_fail_a_dropped_exact_term_changes_the_score(retrieval_world: RetrievalWorld) -> None:
    """Control: scoring without the identifier's share is caught by the comparison above."""
    w = retrieval_world
    scope = TenantScope(tenant_id=w.acme.tenant.id, audience_ids=(w.acme.public_id, w.acme.customer_id))
    terms = query_terms(QUESTION, ts_config="english")
    stats = bm25_stats(scope, terms.all)
    without_exact = keyword_leg(scope, terms.lexemes, stats, limit=100)
    expected = reference_scores(scope, terms.all)
    assert any(h.score != pytest.approx(expected[h.chunk_id], rel=1e-9) for h in without_exact)
