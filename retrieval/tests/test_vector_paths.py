"""The vector leg's two paths: which one the cost model picks, and that both find the same
neighbours (exact is the truth; HNSW on a small corpus must agree with it)."""

from __future__ import annotations

import pytest
from pytest_django import Settings

from corpus.encoders.embedding import get_encoder
from retrieval.config import RetrievalConfig
from retrieval.legs import choose_vector_path, vector_leg
from retrieval.tests.conftest import RetrievalWorld
from tenants.scope import TenantScope


def test_a_small_share_of_a_big_table_is_scanned_exactly() -> None:
    # 1,000 of 110,000 rows: HNSW would visit ~4,400 tuples to keep 40 of them.
    assert choose_vector_path(visible=1_000, table_rows=110_000, limit=40, ef_search=100) == "exact"


def test_a_large_share_uses_the_index() -> None:
    assert choose_vector_path(visible=15_000, table_rows=110_000, limit=40, ef_search=100) == "hnsw"
    assert choose_vector_path(visible=26_000, table_rows=26_000, limit=40, ef_search=100) == "hnsw"


def test_tiny_scopes_and_unknown_table_sizes() -> None:
    assert choose_vector_path(visible=0, table_rows=110_000, limit=40, ef_search=100) == "exact"
    # reltuples is 0 before the first ANALYZE: the scope is then taken as the whole table.
    assert choose_vector_path(visible=100, table_rows=0, limit=40, ef_search=100) == "exact"
    assert choose_vector_path(visible=5_000, table_rows=0, limit=40, ef_search=100) == "hnsw"


def test_an_unknown_path_is_refused(retrieval_world: RetrievalWorld) -> None:
    scope = TenantScope(tenant_id=retrieval_world.acme.tenant.id, audience_ids=(retrieval_world.acme.public_id,))
    with pytest.raises(ValueError, match="vector path 'ivf'"):
        vector_leg(scope, get_encoder().encode_one("refunds"), limit=5, path="ivf", ef_search=RetrievalConfig.from_settings().hnsw_ef_search)


@pytest.mark.django_db
def test_both_paths_return_the_same_neighbours(retrieval_world: RetrievalWorld) -> None:
    w = retrieval_world
    scope = TenantScope(tenant_id=w.acme.tenant.id, audience_ids=(w.acme.public_id, w.acme.customer_id))
    vector = get_encoder().encode_one("How long do I have to ask for a refund?")
    exact = vector_leg(scope, vector, limit=5, path="exact", ef_search=RetrievalConfig.from_settings().hnsw_ef_search)
    hnsw = vector_leg(scope, vector, limit=5, path="hnsw", ef_search=RetrievalConfig.from_settings().hnsw_ef_search)
    auto = vector_leg(scope, vector, limit=5, ef_search=RetrievalConfig.from_settings().hnsw_ef_search)
    assert exact and [h.chunk_id for h in exact] == [h.chunk_id for h in hnsw] == [h.chunk_id for h in auto]
    assert [round(h.score, 6) for h in exact] == sorted((round(h.score, 6) for h in exact), reverse=True)
