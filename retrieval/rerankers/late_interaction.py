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

MAXSIM_CENTER = 0.55  # a MaxSim this high reads as even odds (the logit's zero)
_SCALE = 20.0


@lru_cache(maxsize=1)
def _blas() -> ThreadpoolController:
    return ThreadpoolController()


def _token_matrix(vectors: object) -> np.ndarray:
    matrix = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.maximum(norms, 1e-9)


def maxsim(query: str, texts: Sequence[str], *, token_states: Sequence[np.ndarray | None] = ()) -> np.ndarray:
    """Each text's MaxSim against the query: for each query token its best cosine among the
    text's tokens, averaged over the query's tokens. A text whose states the ingest stored is not
    encoded again (docs/decisions/0063), so with all of them stored only the query is."""
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
    # One product over every text's tokens, then each text's own columns: twenty small BLAS
    # calls cost more in thread hand-offs (next to the encoder's) than the work.
    docs = [_token_matrix(doc) for doc in stored]
    starts = np.cumsum([0] + [len(doc) for doc in docs[:-1]])
    with _blas().limit(limits=1, user_api="blas"):  # see requirements.txt
        similarities = query_tokens @ np.concatenate(docs).T
    best: np.ndarray = np.maximum.reduceat(similarities, starts, axis=1)  # query tokens x texts
    return np.asarray(best.mean(axis=0), dtype=np.float64)


class LateInteractionReranker:
    name = "late_interaction"
    reads_token_states = True

    def score(self, query: str, texts: Sequence[str], *,
              token_states: Sequence[np.ndarray | None] = ()) -> list[RerankScore]:
        if not texts:
            return []
        return [score_from_logit((float(m) - MAXSIM_CENTER) * _SCALE)
                for m in maxsim(query, texts, token_states=token_states)]
