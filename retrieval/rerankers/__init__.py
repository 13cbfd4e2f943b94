"""Rerankers: one interface, one module per backend, chosen by name from BACKENDS.

Every backend returns, per candidate, the raw logit and its sigmoid. A backend that reads
token states (`reads_token_states`) is handed those the ingest stored, None where a candidate
has none; the others read the text alone. Sorting uses the logit
(the sigmoid saturates); gates and thresholds read the sigmoid; traces keep both.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

import numpy as np
from django.utils.module_loading import import_string


@dataclass(frozen=True)
class RerankScore:
    logit: float
    probability: float  # sigmoid(logit)


def sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def score_from_logit(logit: float) -> RerankScore:
    return RerankScore(logit=float(logit), probability=sigmoid(float(logit)))


class Reranker(Protocol):
    name: str
    reads_token_states: bool

    def score(self, query: str, texts: Sequence[str], *,
              token_states: Sequence[np.ndarray | None] = ()) -> list[RerankScore]: ...


# The backends by name (RETRIEVAL_RERANKER picks one); dotted paths so a backend's heavy imports
# load only when it is chosen.
BACKENDS = {
    "cross_encoder": "retrieval.rerankers.cross_encoder.CrossEncoderReranker",
    "late_interaction": "retrieval.rerankers.late_interaction.LateInteractionReranker",
    "llm": "retrieval.rerankers.llm.LlmPointwiseReranker",
}


@lru_cache(maxsize=8)
def get_reranker(name: str) -> Reranker:
    try:
        dotted = BACKENDS[name]
    except KeyError as exc:
        raise ValueError(f"unknown reranker {name!r}; known: {', '.join(sorted(BACKENDS))}") from exc
    return import_string(dotted)()
