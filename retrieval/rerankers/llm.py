"""Pointwise relevance by an LLM, through a scorer the answering layer provides.

retrieval never imports answering (it sits below it), so the model call arrives as a
callable named in settings: RETRIEVAL_LLM_SCORER(query, text) -> probability in [0, 1].
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from retrieval.rerankers import RerankScore

_EPSILON = 1e-4


class LlmPointwiseReranker:
    name = "llm"
    reads_token_states = False  # it reads (query, text) pairs

    def __init__(self, scorer: Callable[[str, str], float] | None = None) -> None:
        if scorer is None:
            if not settings.RETRIEVAL_LLM_SCORER:
                raise ImproperlyConfigured("RETRIEVAL_LLM_SCORER is not set: no LLM to score relevance")
            scorer = import_string(settings.RETRIEVAL_LLM_SCORER)
        self.scorer = scorer

    def score(self, query: str, texts: Sequence[str], *,
              token_states: Sequence[np.ndarray | None] = ()) -> list[RerankScore]:
        scores = []
        for text in texts:
            p = min(max(float(self.scorer(query, text)), _EPSILON), 1 - _EPSILON)
            scores.append(RerankScore(logit=math.log(p / (1 - p)), probability=p))
        return scores
