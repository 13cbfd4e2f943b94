from __future__ import annotations

import pytest
from django.core.management import call_command
from django.test import override_settings

from retrieval.search import search
from retrieval.tests.conftest import RetrievalWorld
from tenants.scope import TenantScope


def public(world: RetrievalWorld) -> TenantScope:
    return TenantScope(tenant_id=world.acme.tenant.id, audience_ids=(world.acme.public_id,))


def slugs(result: object) -> list[str]:
    return [c.slug for c in result.candidates]  # type: ignore[attr-defined]


@pytest.mark.django_db
def test_hybrid_finds_the_right_section(retrieval_world: RetrievalWorld) -> None:
    result = search(scope=public(retrieval_world), query="How long do I have to get my money back?", ts_config="english")
    assert result.candidates and result.candidates[0].slug == "billing/refunds"
    top = result.candidates[0]
    assert top.heading_path == "Refunds > Refund window" and top.ranks


@pytest.mark.django_db
def test_identifiers_match_exactly(retrieval_world: RetrievalWorld) -> None:
    result = search(scope=public(retrieval_world), query="what does E1043 mean", ts_config="english", k=3)
    assert "=e1043" in result.terms.exact
    assert result.candidates[0].heading_path == "Error codes > E1043"
    config = search(scope=public(retrieval_world), query="max_connections", ts_config="english", k=3)
    assert config.candidates[0].slug == "config/limits"
    assert "=max_connections" in config.candidates[0].matched_terms


@pytest.mark.django_db
def test_typo_is_corrected_from_visible_vocabulary(retrieval_world: RetrievalWorld) -> None:
    result = search(scope=public(retrieval_world), query="webhok retries", ts_config="english", k=3)
    assert [(c.original, c.corrected) for c in result.corrections] == [("webhok", "webhook")]
    assert result.candidates[0].slug == "guides/webhooks"


@pytest.mark.django_db
def test_searching_twice_gives_identical_results(retrieval_world: RetrievalWorld) -> None:
    runs = [search(scope=public(retrieval_world), query="refund for annual plan", ts_config="english") for _ in range(3)]
    signatures = [[(c.chunk_id, c.fused_score, c.ranks) for c in r.candidates] for r in runs]
    assert signatures[0] == signatures[1] == signatures[2] and signatures[0]


@pytest.mark.django_db
def test_archived_documents_never_come_back(retrieval_world: RetrievalWorld) -> None:
    result = search(scope=public(retrieval_world), query="how much is the starter plan per month", ts_config="english")
    assert "old/pricing-2023" not in slugs(result) + [c.slug for c in result.dropped]
    assert result.candidates[0].slug == "pricing"


@pytest.mark.django_db
@pytest.mark.parametrize("question", [
    "Do you offer a student discount on hardware?",
    "Can I pay with Bitcoin?",
    "What is the capital of Mongolia?",
])
def test_nothing_relevant_is_a_real_outcome(retrieval_world: RetrievalWorld, question: str) -> None:
    result = search(scope=public(retrieval_world), query=question, ts_config="english")
    assert result.candidates == [], [(c.slug, c.vector_similarity, c.keyword_coverage) for c in result.candidates]


@pytest.mark.django_db
def test_forced_fail_without_the_evidence_filter_strangers_come_back(retrieval_world: RetrievalWorld) -> None:
    with override_settings(RETRIEVAL_VECTOR_SIMILARITY_FLOOR=-1.0):
        result = search(scope=public(retrieval_world), query="What is the capital of Mongolia?", ts_config="english")
    assert result.candidates  # so the negative test above can fail


@pytest.mark.django_db
def test_rerank_modes(retrieval_world: RetrievalWorld) -> None:
    scope = public(retrieval_world)
    off = search(scope=scope, query="refund window days", ts_config="english", rerank="off")
    assert not off.reranked and off.candidates[0].score_kind == "fusion"
    always = search(scope=scope, query="refund window days", ts_config="english", rerank="always")
    if len(always.candidates) > 1:
        assert always.reranked and always.candidates[0].score_kind == "rerank"
        logits = [c.rerank_logit for c in always.candidates if c.rerank_logit is not None]
        assert logits == sorted(logits, reverse=True)
    with override_settings(RETRIEVAL_RERANK_MARGIN=0.0):
        clear = search(scope=scope, query="refund window days", ts_config="english", rerank="conditional")
    assert not clear.reranked and clear.rerank_reason.startswith(("clear", "too few"))


@pytest.mark.django_db
def test_search_command_explains(retrieval_world: RetrievalWorld, capsys: pytest.CaptureFixture[str]) -> None:
    call_command("search", "webhok retries", tenant="ret-acme", explain=True)
    out = capsys.readouterr().out
    assert "guides/webhooks" in out and "typo: webhok → webhook" in out and "timings ms:" in out


@pytest.mark.django_db
def test_multi_query_fuses_the_rephrasings(retrieval_world: RetrievalWorld) -> None:
    from retrieval.search import multi_query_search

    def rephrase(question: str) -> list[str]:
        return ["refund window for purchases", "how many days until my money comes back", question]

    fused = multi_query_search(scope=public(retrieval_world), query="money back?", ts_config="english",
                               rephrase=rephrase)
    assert fused.candidates[0].slug == "billing/refunds"
    assert len({c.chunk_id for c in fused.candidates}) == len(fused.candidates)  # fused, not concatenated
