from __future__ import annotations

import datetime as dt

from django.test import override_settings

from answering.pipeline.gate import confidence_gate
from retrieval.search import Candidate


def candidate(fused: float, rerank: float | None = None) -> Candidate:
    return Candidate(chunk_id=1, document_id=1, slug="s", title="t", source_type="doc", heading_path="h",
                     content="c", page=None, version="", effective_date=dt.date(2025, 1, 1), contested=False,
                     fused_score=fused, ranks={"vector": 1}, vector_similarity=0.5, keyword_coverage=0.5,
                     matched_terms=[], rerank_logit=None if rerank is None else 0.0, rerank_probability=rerank)


@override_settings(ANSWER_GATE_FUSION_MIN=0.02, ANSWER_GATE_RERANK_MIN=0.3)
def test_the_threshold_follows_the_score_kind_in_the_data() -> None:
    fused_only = confidence_gate([candidate(0.025)])
    assert fused_only.passed and fused_only.score_kind == "fusion" and fused_only.threshold == 0.02
    reranked = confidence_gate([candidate(0.025, rerank=0.25)])
    assert not reranked.passed and reranked.score_kind == "rerank" and reranked.threshold == 0.3
    assert confidence_gate([candidate(0.01)]).passed is False
    assert confidence_gate([]).reason == "no candidate passed the evidence filter"


@override_settings(ANSWER_GATE_FUSION_MIN=0.0, ANSWER_GATE_MIN_QUERY_COVERAGE=0.3)
def test_a_question_whose_distinctive_words_were_not_found_is_gated() -> None:
    gated = confidence_gate([candidate(0.03)], query_coverage=0.12)
    assert not gated.passed and gated.score_kind == "query_coverage" and "0.12 < 0.3" in gated.reason
    assert confidence_gate([candidate(0.03)], query_coverage=0.5).passed
