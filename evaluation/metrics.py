"""Retrieval and answer metrics. Pure functions over ranked ids and case outcomes."""

from __future__ import annotations

import math
from collections.abc import Sequence


def first_hit_rank(ranked: Sequence[int], relevant: set[int]) -> int | None:
    for position, chunk_id in enumerate(ranked, start=1):
        if chunk_id in relevant:
            return position
    return None


def recall_at(rank: int | None, k: int) -> float:
    return 1.0 if rank is not None and rank <= k else 0.0


def reciprocal_rank(rank: int | None) -> float:
    return 1.0 / rank if rank else 0.0


def ndcg_at(rank: int | None, k: int = 10) -> float:
    """Any-of ground truth: the first matching chunk is the answer, so the ideal DCG is 1."""
    return 1.0 / math.log2(rank + 1) if rank is not None and rank <= k else 0.0


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = max(0, min(len(ordered) - 1, math.ceil(q / 100 * len(ordered)) - 1))
    return ordered[index]


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def precision_recall(predicted: Sequence[bool], actual: Sequence[bool]) -> tuple[float | None, float | None]:
    tp = sum(1 for p, a in zip(predicted, actual) if p and a)
    fp = sum(1 for p, a in zip(predicted, actual) if p and not a)
    fn = sum(1 for p, a in zip(predicted, actual) if a and not p)
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    return precision, recall
