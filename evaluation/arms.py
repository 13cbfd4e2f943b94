"""Experiment arms: the same pipeline, one knob each. `hybrid` is the live configuration."""

from __future__ import annotations

from typing import Any

ARMS: dict[str, dict[str, Any]] = {
    "hybrid": {},
    "vector": {"mode": "vector"},
    "keyword": {"mode": "keyword"},
    "keyword_ts_rank_cd": {"mode": "keyword", "keyword_ranking": "ts_rank_cd"},
    "hybrid_ts_rank_cd": {"keyword_ranking": "ts_rank_cd"},
    "hybrid_rerank": {"rerank": "always"},
    "hybrid_rerank_conditional": {"rerank": "conditional"},
    "hybrid_no_typo_correction": {"correct_typos": False},
    "hybrid_unfiltered": {"settings": {"RETRIEVAL_VECTOR_SIMILARITY_FLOOR": -1.0}},
}
DEFAULT_ARMS = ("hybrid", "vector", "keyword", "keyword_ts_rank_cd", "hybrid_ts_rank_cd")
