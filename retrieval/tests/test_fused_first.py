"""keep_fused_first: the document fusion ranked first stays within the first places (0082)."""

from __future__ import annotations

from retrieval.search import Candidate, keep_fused_first


def _candidate(chunk_id: int, document_id: int) -> Candidate:
    return Candidate(chunk_id=chunk_id, document_id=document_id, slug=f"doc-{document_id}", title="",
                     source_type="doc", heading_path="", content="", page=None, version="", effective_date=None,
                     contested=False, fused_score=0.0, ranks={}, vector_similarity=0.0, keyword_coverage=0.0,
                     matched_terms=[])


def ids(candidates: list[Candidate]) -> list[int]:
    return [c.chunk_id for c in candidates]


# After reranking: chunk 10 (fusion's first, document 1) fell to seventh place.
FUSED_FIRST = _candidate(10, 1)
RERANKED = [_candidate(i, i + 100) for i in range(1, 7)] + [FUSED_FIRST, _candidate(7, 107)]


def test_fusions_first_pushed_below_the_floor_comes_back_to_it() -> None:
    kept = ids(keep_fused_first(list(RERANKED), FUSED_FIRST, 5))
    assert kept == [1, 2, 3, 4, 10, 5, 6, 7]  # the reranker's first four untouched


def test_within_the_floor_nothing_moves() -> None:
    assert ids(keep_fused_first(list(RERANKED), FUSED_FIRST, 8)) == ids(RERANKED)


def test_off_by_default_nothing_moves() -> None:
    assert ids(keep_fused_first(list(RERANKED), FUSED_FIRST, 0)) == ids(RERANKED)


def test_the_documents_reranked_chunk_stands_for_it() -> None:
    # The reranker preferred another chunk of the same document: that chunk is the one kept.
    other = _candidate(11, 1)
    reranked = [_candidate(i, i + 100) for i in range(1, 7)] + [other]
    kept = keep_fused_first(reranked, FUSED_FIRST, 3)
    assert ids(kept) == [1, 2, 11, 3, 4, 5, 6]


def test_a_first_cut_away_before_is_put_back() -> None:
    reranked = [_candidate(i, i + 100) for i in range(1, 7)]
    assert ids(keep_fused_first(reranked, FUSED_FIRST, 5)) == [1, 2, 3, 4, 10, 5, 6]
