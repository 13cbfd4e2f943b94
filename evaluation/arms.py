"""Experiment arms: the same pipeline, one knob each, as settings overrides.

`hybrid` is the live configuration. Every arm runs the full answer pipeline, so retrieval and
answer metrics are measured together; the cache is off during evaluation.
"""

from __future__ import annotations

from typing import Any

ARMS: dict[str, dict[str, Any]] = {
    "hybrid": {},
    "vector": {"RETRIEVAL_MODE": "vector"},
    "keyword": {"RETRIEVAL_MODE": "keyword"},
    "keyword_ts_rank_cd": {"RETRIEVAL_MODE": "keyword", "RETRIEVAL_KEYWORD_RANKING": "ts_rank_cd"},
    "hybrid_ts_rank_cd": {"RETRIEVAL_KEYWORD_RANKING": "ts_rank_cd"},
    "hybrid_no_rerank": {"RETRIEVAL_RERANK_MODE": "off"},
    "hybrid_rerank_conditional": {"RETRIEVAL_RERANK_MODE": "conditional"},
    "hybrid_no_typo_correction": {"RETRIEVAL_TYPO_CORRECTION": False},
    "hybrid_no_diversity": {"RETRIEVAL_MAX_CHUNKS_PER_DOCUMENT": 0},
    "hybrid_unfiltered": {"RETRIEVAL_VECTOR_SIMILARITY_FLOOR": -1.0},
}
DEFAULT_ARMS = ("hybrid", "vector", "keyword", "keyword_ts_rank_cd", "hybrid_no_rerank")
