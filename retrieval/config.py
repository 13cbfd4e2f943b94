"""What a search does, as one frozen value: the one place retrieval reads settings.

A surface (the API, the chat page, a management command, the evaluation) builds it once per
request with from_settings() and hands it down; the search, its legs and the reranking read
its fields, never django.conf.settings. An eval arm is this value with fields replaced
(answering.pipeline.config.Configuration.with_overrides), not a settings override.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings


@dataclass(frozen=True)
class RetrievalConfig:
    candidates_per_leg: int  # each leg's depth before fusion (0072)
    max_chunks_per_document: int  # diversity: at most this many chunks of one document first (0: off)
    hnsw_ef_search: int  # pgvector's HNSW search breadth (0028, 0069)
    min_vector_margin: float  # vector evidence: cosine above the scope's chance (0042); the gate's fusion floor
    rerank_mode: str  # always | off (retrieval.search.RERANK_MODES)
    reranker: str  # a name in retrieval.rerankers.BACKENDS
    rerank_depth: int  # candidates the reranker scores
    context_chunks: int  # the chunks the answerer reads; the question's coverage is measured on them

    @classmethod
    def from_settings(cls) -> RetrievalConfig:
        return cls(
            candidates_per_leg=settings.RETRIEVAL_CANDIDATES_PER_LEG,
            max_chunks_per_document=settings.RETRIEVAL_MAX_CHUNKS_PER_DOCUMENT,
            hnsw_ef_search=settings.RETRIEVAL_HNSW_EF_SEARCH,
            min_vector_margin=settings.RETRIEVAL_MIN_VECTOR_MARGIN,
            rerank_mode=settings.RETRIEVAL_RERANK_MODE,
            reranker=settings.RETRIEVAL_RERANKER,
            rerank_depth=settings.RETRIEVAL_RERANK_DEPTH,
            context_chunks=settings.ANSWER_CONTEXT_CHUNKS,
        )
