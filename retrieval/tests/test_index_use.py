"""Under forced RLS the app role's keyword leg and typo lookup must be served by their indexes.

PostgreSQL only evaluates a LEAKPROOF operator inside an index scan ahead of the policy's
quals; the embedded bootstrap marks `@@` and `%` (docs/decisions/0024). These tests read the
app role's plans, and prove they can fail by unmarking the operator for one transaction.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connections
from psycopg import sql

from retrieval.checks import check_search_operators_leakproof, not_leakproof
from retrieval.tests.conftest import RetrievalWorld
from tenants.readers import reader_scope
from tenants.scope import ChunkQuery, TenantScope

pytestmark = pytest.mark.django_db(databases=["default", "rls_bypass"])


@contextmanager
def unmarked(function: str) -> Iterator[None]:
    """Take LEAKPROOF off one operator, committed (its own superuser connection, outside the
    test's transaction, so the app role's planner sees it), and always put it back."""
    import psycopg

    params = connections["rls_bypass"].get_connection_params()
    with psycopg.connect(**params, autocommit=True) as conn:
        conn.execute(f"ALTER FUNCTION {function} NOT LEAKPROOF")  # fixed text, no input
        try:
            yield
        finally:
            conn.execute(f"ALTER FUNCTION {function} LEAKPROOF")


def plan_of(scope: TenantScope, query: ChunkQuery) -> str:
    statement = "EXPLAIN (COSTS OFF) " + scope.compose(query).as_string(None)
    with scope.rls_context() as cursor:
        cursor.execute("SELECT set_config('enable_seqscan', 'off', true)")
        cursor.execute(statement, {**query.params, "_scope_tenant": scope.tenant_id,
                                   "_scope_audiences": list(scope.audience_ids)})
        return "\n".join(row[0] for row in cursor.fetchall())


@pytest.fixture(scope="module")
def big_tenant(django_db_setup: Any, django_db_blocker: Any) -> TenantScope:
    """3,000 committed chunks of filler and 5 with a rare word, analysed: big enough that the
    planner prefers the GIN index whenever it is allowed to use it (random vectors: no encoder)."""
    import numpy as np

    from corpus.models import Document
    from tenants import actions
    from tenants.writer import ChunkRow, ChunkWriter

    rng = np.random.default_rng(1)
    words = [f"filler{i}" for i in range(300)]
    with django_db_blocker.unblock():
        tenant, created = actions.tenant_get_or_create(slug="index-use-big")
        audience = actions.audience_ids(tenant=tenant, slugs=["public"])[0]
        writer = ChunkWriter(tenant_id=tenant.id)
        if created:
            for batch in range(30):
                vectors = rng.standard_normal((100, 384)).astype(np.float32)
                with writer.rls_context() as cursor:
                    document = Document.objects.create(tenant=tenant, audience_id=audience, slug=f"d{batch}",
                                                       title=f"D{batch}", content_hash="index-use")
                    writer.insert(cursor, [ChunkRow(
                        document_id=document.pk, audience_id=audience, ordinal=i, heading_path="D",
                        content=" ".join(rng.choice(words, 60)) + (" zebrafish" if batch == 0 and i < 5 else ""),
                        token_count=60, embedding=vectors[i] / np.linalg.norm(vectors[i]), ts_config="simple",
                        # a vocabulary of 30,000 terms, the size of the PostgreSQL manual's
                        exact_terms=[f"E{batch * 100 + i}x{j}" for j in range(10)],
                    ) for i in range(100)])
        with connections["rls_bypass"].cursor() as cursor:
            # What autovacuum does for a real tenant: flush the GIN pending list, fresh statistics.
            cursor.execute("VACUUM ANALYZE")
        return reader_scope(tenant=tenant, audiences=["public"])


def keyword_query() -> ChunkQuery:
    return ChunkQuery(select=sql.SQL("c.id"), where=sql.SQL("c.tsv @@ %(q)s::tsquery"), params={"q": "'zebrafish'"})


def test_bootstrap_marks_the_operators_and_the_check_is_quiet() -> None:
    assert not_leakproof() == []
    assert check_search_operators_leakproof(databases=["default"]) == []


def test_keyword_leg_uses_the_gin_index_as_the_app_role(big_tenant: TenantScope) -> None:
    scope = big_tenant
    assert "corpus_chunk_tsv_idx" in plan_of(scope, keyword_query())


def test_forced_fail_without_leakproof_the_gin_index_is_refused(big_tenant: TenantScope) -> None:
    scope = big_tenant
    with unmarked("pg_catalog.ts_match_vq(tsvector, tsquery)"):
        assert "corpus_chunk_tsv_idx" not in plan_of(scope, keyword_query())
        [warning] = check_search_operators_leakproof(databases=["default"])
        assert warning.id == "retrieval.W001" and "ts_match_vq" in warning.msg and "ALTER FUNCTION" in (warning.hint or "")


def test_typo_lookup_uses_the_trigram_index_as_the_app_role(big_tenant: TenantScope) -> None:
    scope = big_tenant
    statement = ("EXPLAIN (COSTS OFF) SELECT s.term FROM corpus_term_stats s WHERE s.tenant_id = %(t)s"
                 " AND s.term %% %(w)s")

    def plan() -> str:
        with scope.rls_context() as cursor:
            cursor.execute("SELECT set_config('enable_seqscan', 'off', true)")
            cursor.execute(statement, {"t": scope.tenant_id, "w": "zebrafsh"})
            return "\n".join(row[0] for row in cursor.fetchall())

    assert "corpus_term_stats_trgm_idx" in plan()
    with unmarked("public.similarity_op(text, text)"):
        assert "corpus_term_stats_trgm_idx" not in plan()

