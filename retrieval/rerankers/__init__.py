"""Rerankers: one interface, one module per backend, chosen by name from settings.RERANKERS.

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
from django.conf import settings
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


@lru_cache(maxsize=8)
def get_reranker(name: str) -> Reranker:
    try:
        dotted = settings.RERANKERS[name]
    except KeyError as exc:
        raise ValueError(f"unknown reranker {name!r}; known: {', '.join(sorted(settings.RERANKERS))}") from exc
    return import_string(dotted)()
