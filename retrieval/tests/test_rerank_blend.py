"""blend_rerank: the reranker's order by default, fusion's order folded in only when asked (0072)."""

from __future__ import annotations

from retrieval.search import Candidate, blend_rerank


def _candidate(chunk_id: int, logit: float) -> Candidate:
    return Candidate(chunk_id=chunk_id, document_id=chunk_id, slug=f"doc-{chunk_id}", title="", source_type="doc",
                     heading_path="", content="", page=None, version="", effective_date=None, contested=False,
                     fused_score=0.0, ranks={}, vector_similarity=0.0, keyword_coverage=0.0, matched_terms=[],
                     rerank_logit=logit)


# Fusion's order is the list's order: chunk 1 first. The reranker puts it last.
HEAD = [_candidate(1, -3.0), _candidate(2, 1.0), _candidate(3, 2.0), _candidate(4, 0.5), _candidate(5, 0.0)]


def ids(candidates: list[Candidate]) -> list[int]:
    return [c.chunk_id for c in candidates]


def test_without_a_blend_the_reranker_alone_orders_the_head() -> None:
    assert ids(blend_rerank(list(HEAD), 0.0)) == [3, 2, 4, 5, 1]


def test_a_blend_keeps_fusions_first_in_the_head_the_reranker_put_last() -> None:
    blended = ids(blend_rerank(list(HEAD), 1.0))
    assert sorted(blended) == [1, 2, 3, 4, 5]
    assert blended.index(1) < 4  # the reranker alone puts it fifth


def test_keep_top_holds_the_rerankers_first_in_place() -> None:
    blended = ids(blend_rerank(list(HEAD), 5.0, keep_top=1))
    assert blended[0] == 3  # the reranker's first, however heavy fusion's weight
    assert blended[1:] == [1, 2, 4, 5]  # then fusion's order dominates
