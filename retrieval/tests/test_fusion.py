from __future__ import annotations

from retrieval.fusion import reciprocal_rank_fusion


def test_rrf_arithmetic() -> None:
    fused = reciprocal_rank_fusion({"vector": [1, 2], "keyword": [2, 3]}, k=60)
    scores = {f.chunk_id: f.score for f in fused}
    assert scores[2] == 1 / 62 + 1 / 61
    assert scores[1] == 1 / 61 and scores[3] == 1 / 62
    assert [f.chunk_id for f in fused] == [2, 1, 3]
    assert fused[0].ranks == {"vector": 2, "keyword": 1}


def test_agreement_beats_a_single_rank_one_with_20_candidate_legs() -> None:
    vector = [1000 + i for i in range(19)] + [7]  # 7 is last (rank 20) in both legs
    keyword = [2000 + i for i in range(19)] + [7]
    fused = reciprocal_rank_fusion({"vector": vector, "keyword": keyword})
    assert fused[0].chunk_id == 7
    assert fused[0].score == 2 / 80 > 1 / 61


def test_ties_break_deterministically() -> None:
    a = reciprocal_rank_fusion({"vector": [5, 3], "keyword": [3, 5]})
    b = reciprocal_rank_fusion({"keyword": [3, 5], "vector": [5, 3]})
    assert [f.chunk_id for f in a] == [f.chunk_id for f in b] == [3, 5]  # equal score, leg count, rank → id


def test_weights_and_duplicates() -> None:
    fused = reciprocal_rank_fusion({"vector": [1, 1, 2], "keyword": [2]}, weights={"keyword": 2.0})
    assert fused[0].chunk_id == 2
    assert fused[1].ranks == {"vector": 1}
