from __future__ import annotations

import re

import pytest
from django.core.management import call_command
from django.conf import settings
from django.test import override_settings

from retrieval.legs import Bm25Stats, query_terms
from retrieval.querytext import is_when_word, written_names
from retrieval.search import Candidate, SearchResult, query_coverage, search
from retrieval.tests.conftest import RetrievalWorld
from tenants.scope import TenantScope


def public(world: RetrievalWorld) -> TenantScope:
    return TenantScope(tenant_id=world.acme.tenant.id, audience_ids=(world.acme.public_id,))


def slugs(result: SearchResult) -> list[str]:
    return [c.slug for c in result.candidates]


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
def test_a_word_written_as_a_name_is_not_corrected(retrieval_world: RetrievalWorld) -> None:
    """`Webhok` written as a name is something the corpus does not know, not a typo of
    `webhook`: it stays an unmatched term for the gate (docs/decisions/0051). Its control is
    the test above, the same word in lower case."""
    result = search(scope=public(retrieval_world), query="How do Webhok retries work?", ts_config="english", k=3)
    assert result.corrections == [] and "webhok" in result.terms.lexemes
    assert result.unknown_names == ("webhok",) and result.as_trace()["unknown_names"] == ["webhok"]
    lower = search(scope=public(retrieval_world), query="how do webhok retries work?", ts_config="english", k=3)
    assert lower.unknown_names == () and lower.corrections  # the control: a typo, corrected
    known = search(scope=public(retrieval_world), query="How do Webhook retries work?", ts_config="english", k=3)
    assert known.unknown_names == ()  # a name the corpus does contain


def test_written_names() -> None:
    assert written_names("How do I register a Flask blueprint?") == ["I", "Flask"]
    assert written_names("Expose models through GraphQL. Deploy on iPhone") == ["GraphQL", "iPhone"]
    assert written_names("Flask is nice. Webhok? autovaccum settings") == []


def found(*terms: str) -> Candidate:
    return Candidate(chunk_id=1, document_id=1, slug="s", title="t", source_type="doc", heading_path="h",
                     content="c", page=None, version="", effective_date=None, contested=False, fused_score=0.03,
                     ranks={"vector": 1}, vector_similarity=0.5, keyword_coverage=0.5, matched_terms=list(terms))


@pytest.mark.django_db
def test_the_askers_day_is_not_a_word_the_pages_must_hold() -> None:
    """pgdev-007's shape (0068): a page on point-in-time recovery never says "3pm" or "yesterday"."""
    terms = query_terms("Someone deleted rows at 3pm yesterday; can I restore the database?", ts_config="english")
    assert {"3pm", "yesterday"} <= set(terms.lexemes)
    assert [t for t in terms.lexemes if is_when_word(t)] == ["3pm", "yesterday"]
    assert not any(is_when_word(w) for w in ("restor", "databas", "3", "pm", "day", "time", "3pmx"))
    # The present and the future stay counted: no page knows whether the service is down today.
    assert not any(is_when_word(w) for w in ("today", "tonight", "tomorrow"))
    # Unseen words carry the highest IDF, so counted they would sink the question's coverage.
    stats = Bm25Stats(idf={t: 1.0 for t in terms.lexemes} | {"3pm": 9.0, "yesterday": 7.0}, df={},
                      chunk_count=100, avg_length=50.0)
    on_topic = [found(*(t for t in terms.lexemes if not is_when_word(t)))]
    assert query_coverage(on_topic, terms, stats) == 1.0
    # A page that did hold the word does not earn coverage beyond the question's counted words.
    assert query_coverage([found("3pm")], terms, stats) == 0.0


@pytest.mark.django_db
def test_searching_twice_gives_identical_results(retrieval_world: RetrievalWorld) -> None:
    runs = [search(scope=public(retrieval_world), query="refund for annual plan", ts_config="english") for _ in range(3)]
    signatures = [[(c.chunk_id, c.fused_score, c.ranks) for c in r.candidates] for r in runs]
    assert signatures[0] == signatures[1] == signatures[2] and signatures[0]


@pytest.mark.django_db
def test_archived_documents_never_come_back(retrieval_world: RetrievalWorld) -> None:
    result = search(scope=public(retrieval_world), query="how much is the starter plan per month", ts_config="english")
    assert "old/pricing-2023" not in slugs(result)
    assert result.candidates[0].slug == "pricing"


# ("a student discount on hardware" is near the pricing page in meaning: the gate's coverage
# rule stops that one, answering/tests/test_gate.py.)
OFF_TOPIC = ["Can I pay with Bitcoin?", "What is the capital of Mongolia?"]


@pytest.mark.django_db
@pytest.mark.parametrize("question", OFF_TOPIC)
def test_an_off_topic_question_keeps_its_candidates_with_no_evidence(retrieval_world: RetrievalWorld,
                                                                     question: str) -> None:
    """Nothing is dropped; every candidate says it has no evidence, and the search's best cosine
    is under the floor above chance that the gate reads (docs/decisions/0042)."""
    result = search(scope=public(retrieval_world), query=question, ts_config="english", rerank="off")
    assert result.candidates
    assert {c.evidence for c in result.candidates} == {"weak"}, [(c.slug, c.vector_margin) for c in result.candidates]
    assert result.vector_margin < settings.RETRIEVAL_MIN_VECTOR_MARGIN
    assert 0.0 < result.chance < 0.5 and result.as_trace()["chance"] == round(result.chance, 4)


@pytest.mark.django_db
def test_an_answerable_question_has_vector_evidence_above_chance(retrieval_world: RetrievalWorld) -> None:
    result = search(scope=public(retrieval_world), query="How long do I have to get my money back?",
                    ts_config="english", rerank="off")
    top = result.candidates[0]
    assert top.slug == "billing/refunds" and "vector" in top.evidence
    assert top.vector_margin == pytest.approx(top.vector_similarity - result.chance)
    assert result.vector_margin >= settings.RETRIEVAL_MIN_VECTOR_MARGIN


@pytest.mark.django_db
def test_a_rare_matched_term_is_keyword_evidence_and_a_common_one_is_not(retrieval_world: RetrievalWorld) -> None:
    rare = search(scope=public(retrieval_world), query="E1043", ts_config="english", rerank="off")
    assert "keyword" in rare.candidates[0].evidence
    with override_settings(RETRIEVAL_MIN_VECTOR_MARGIN=9.0):  # vector evidence out of reach
        common = search(scope=public(retrieval_world), query="the plan", ts_config="english", rerank="off")
    assert all(c.evidence == "weak" for c in common.candidates if "plan" in c.matched_terms)


@pytest.mark.django_db
def test_rerank_modes(retrieval_world: RetrievalWorld) -> None:
    scope = public(retrieval_world)
    off = search(scope=scope, query="refund window days", ts_config="english", rerank="off")
    assert not off.reranked and off.candidates[0].score_kind == "fusion"
    always = search(scope=scope, query="refund window days", ts_config="english", rerank="always")
    if len(always.candidates) > 1:
        assert always.reranked and always.candidates[0].score_kind == "rerank"
        # Diversity puts a document's second chunk after every other document's first: the
        # first chunks keep the reranker's order.
        firsts = {c.document_id: c.rerank_logit for c in reversed(always.candidates) if c.rerank_logit is not None}
        logits = [firsts[d] for d in dict.fromkeys(c.document_id for c in always.candidates) if d in firsts]
        assert len(logits) > 1 and logits == sorted(logits, reverse=True)
    with pytest.raises(ValueError, match="rerank mode"):
        search(scope=scope, query="refund window days", ts_config="english", rerank="conditional")


@pytest.mark.django_db
def test_search_command_explains(retrieval_world: RetrievalWorld, capsys: pytest.CaptureFixture[str]) -> None:
    call_command("search", "webhok retries", tenant="ret-acme", explain=True)
    out = capsys.readouterr().out
    assert "guides/webhooks" in out and "typo: webhok → webhook" in out and "timings ms:" in out
    assert re.search(r"rerank: .* \([\d.]+ ms; question and candidates in one call to encoder all-MiniLM-L6-v2:", out)


@pytest.mark.django_db
def test_multi_query_fuses_the_rephrasings(retrieval_world: RetrievalWorld) -> None:
    from retrieval.search import multi_query_search

    def rephrase(question: str) -> list[str]:
        return ["refund window for purchases", "how many days until my money comes back", question]

    # Reranking off: the test is about fusing the rephrasings. (With every candidate kept, the
    # late-interaction reranker puts "retried ... for three days" above the refund window for
    # "how many days until my money comes back" in this seven-chunk world.)
    fused = multi_query_search(scope=public(retrieval_world), query="money back?", ts_config="english",
                               rephrase=rephrase, rerank="off")
    assert fused.candidates[0].slug == "billing/refunds"
    assert len({c.chunk_id for c in fused.candidates}) == len(fused.candidates)  # fused, not concatenated
