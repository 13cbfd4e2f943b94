"""Every leg, through the scope, against sentinels in another tenant and a hidden audience,
with controls proving each sentinel is findable where it is allowed."""

from __future__ import annotations

import pytest

from corpus.encoders.embedding import get_encoder
from retrieval.config import RetrievalConfig
from retrieval.legs import bm25_stats, keyword_leg, query_terms, vector_leg
from retrieval.search import search
from retrieval.tests.conftest import RetrievalWorld
from tenants.scope import TenantScope

GLOBEX_QUESTION = "How does the zanzibar protocol rotate vault keys with the marmoset scheduler?"
INTERNAL_QUESTION = "How do I page the duty manager through the quokkaline pager?"


def acme_public(w: RetrievalWorld) -> TenantScope:
    return TenantScope(tenant_id=w.acme.tenant.id, audience_ids=(w.acme.public_id, w.acme.customer_id))


def leg_texts(scope: TenantScope, question: str) -> set[str]:
    vector = vector_leg(scope, get_encoder().encode_one(question), limit=50, ef_search=RetrievalConfig.from_settings().hnsw_ef_search)
    terms = query_terms(question, ts_config="english")
    stats = bm25_stats(scope, terms.all)
    keyword = keyword_leg(scope, terms.all, stats, limit=50)
    ids = {h.chunk_id for h in vector + keyword}
    result = search(scope=scope, query=question, ts_config="english", k=50)
    found = {c.content for c in result.candidates}
    vocabulary = {t for t, df in stats.df.items() if df}
    corrections = {c.corrected for c in result.corrections}
    return found | vocabulary | corrections | {str(i) for i in ids}


@pytest.mark.django_db
def test_other_tenant_is_invisible_to_every_leg(retrieval_world: RetrievalWorld) -> None:
    seen = leg_texts(acme_public(retrieval_world), GLOBEX_QUESTION)
    assert not [s for s in seen if "zanzibar" in s or "marmoset" in s]
    typo = search(scope=acme_public(retrieval_world), query="zanzibarr marmosett", ts_config="english")
    assert not typo.corrections  # the vocabulary of another tenant offers no correction


@pytest.mark.django_db
def test_hidden_audience_is_invisible_to_every_leg(retrieval_world: RetrievalWorld) -> None:
    seen = leg_texts(acme_public(retrieval_world), INTERNAL_QUESTION)
    assert not [s for s in seen if "quokkaline" in s]


@pytest.mark.django_db
def test_controls_sentinels_are_found_where_allowed(retrieval_world: RetrievalWorld) -> None:
    w = retrieval_world
    globex = TenantScope(tenant_id=w.globex.tenant.id, audience_ids=(w.globex.public_id,))
    assert any("zanzibar" in s for s in leg_texts(globex, GLOBEX_QUESTION))
    fixed = search(scope=globex, query="zanzibarr protocol", ts_config="english")
    assert [c.corrected for c in fixed.corrections] == ["zanzibar"]
    staff = TenantScope(tenant_id=w.acme.tenant.id, audience_ids=(w.acme.public_id, w.acme.internal_id))
    result = search(scope=staff, query=INTERNAL_QUESTION, ts_config="english")
    assert result.candidates and result.candidates[0].slug == "internal/escalation"
