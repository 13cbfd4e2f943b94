"""Token-level late interaction with the bundled encoder: no extra model weights.

ColBERT-style MaxSim: each query token takes its best cosine match among the candidate's
token embeddings; the mean over query tokens is the relevance. The bi-encoder was not
trained for this, so the score is centred and scaled into a logit by fixed constants; the
eval, not this comment, says whether it helps (docs/decisions/0009-reranking.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from threadpoolctl import ThreadpoolController

from corpus.encoders.embedding import get_encoder
from retrieval.rerankers import RerankScore, score_from_logit

_CENTER = 0.55
_SCALE = 20.0


@lru_cache(maxsize=1)
def _blas() -> ThreadpoolController:
    return ThreadpoolController()


def _token_matrix(vectors: object) -> np.ndarray:
    matrix = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.maximum(norms, 1e-9)


class LateInteractionReranker:
    name = "late_interaction"
    reads_token_states = True

    def score(self, query: str, texts: Sequence[str], *,
              token_states: Sequence[np.ndarray | None] = ()) -> list[RerankScore]:
        """MaxSim of the query against each text; a text whose states the ingest stored is not
        encoded again (docs/decisions/0063), so with all of them stored only the query is."""
        if not texts:
            return []
        encoder = get_encoder()
        stored = list(token_states) or [None] * len(texts)
        missing = [i for i, states in enumerate(stored) if states is None]
        # The question on its own: the int8 encoder quantises each batch's activations by that
        # batch's range, and a question batched with candidates moved MaxSim by up to 0.04.
        query_matrix = _token_matrix(encoder.token_embeddings([query])[0])
        if missing:
            for i, states in zip(missing, encoder.token_embeddings([texts[i] for i in missing])):
                stored[i] = states
        query_tokens = query_matrix[1:-1] if len(query_matrix) > 2 else query_matrix  # drop [CLS]/[SEP]
        # One product over every candidate's tokens, then each candidate's own columns: twenty
        # small BLAS calls cost more in thread hand-offs (next to the encoder's) than the work.
        docs = [_token_matrix(doc) for doc in stored]
        starts = np.cumsum([0] + [len(doc) for doc in docs[:-1]])
        with _blas().limit(limits=1, user_api="blas"):  # see requirements.txt
            similarities = query_tokens @ np.concatenate(docs).T
        best = np.maximum.reduceat(similarities, starts, axis=1)  # query tokens x candidates
        return [score_from_logit((float(maxsim) - _CENTER) * _SCALE) for maxsim in best.mean(axis=0)]
