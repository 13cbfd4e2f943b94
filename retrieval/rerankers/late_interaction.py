"""Token-level late interaction with the bundled encoder: no extra model weights.

ColBERT-style MaxSim: each query token takes its best cosine match among the candidate's
token embeddings; the mean over query tokens is the relevance. The bi-encoder was not
trained for this, so the score is centred and scaled into a logit by fixed constants; the
eval, not this comment, says whether it helps (docs/decisions/0009-reranking.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from corpus.embedding import get_encoder
from retrieval.rerankers import RerankScore, score_from_logit

_CENTER = 0.55
_SCALE = 20.0


def _token_matrix(vectors: object) -> np.ndarray:
    matrix = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.maximum(norms, 1e-9)


class LateInteractionReranker:
    name = "late_interaction"

    def score(self, query: str, texts: Sequence[str]) -> list[RerankScore]:
        if not texts:
            return []
        # The query and every candidate in one encoder call, on the configured (fast) backend.
        matrices = [_token_matrix(t) for t in get_encoder().token_embeddings([query, *texts])]
        query_tokens = matrices[0][1:-1] if len(matrices[0]) > 2 else matrices[0]  # drop [CLS]/[SEP]
        scores = []
        for doc in matrices[1:]:
            maxsim = float((query_tokens @ doc.T).max(axis=1).mean())
            scores.append(score_from_logit((maxsim - _CENTER) * _SCALE))
        return scores
