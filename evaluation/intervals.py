"""How sure a number is: percentile-bootstrap intervals over cases, and case-level wins and losses.

A developer set has a few dozen answerable cases, so one case moves page recall by 0.02 to
0.04; a mean alone let a one-case difference decide a default (issue 16). Every arm's headline
numbers carry a 95% interval from resampling its cases, and each arm is set against the first
arm case by case (which cases one finds in the top 5 and the other does not), with a paired
interval on the difference (the same resampled cases for both arms).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from typing import Any

import numpy as np

RESAMPLES = 2_000
SEED = 16  # fixed: the same report gives the same intervals on every run
CONFIDENCE = 0.95
METHOD = "percentile bootstrap over cases"


def _quantiles(means: np.ndarray, confidence: float) -> tuple[float, float]:
    # Nearest-rank quantiles, so the bounds are means some resample really had.
    ordered = np.sort(means)
    tail = (1 - confidence) / 2
    low = ordered[int(math.floor(tail * len(ordered)))]
    high = ordered[int(math.ceil((1 - tail) * len(ordered))) - 1]
    return float(low), float(high)


def bootstrap_interval(values: Sequence[float], *, resamples: int = RESAMPLES, seed: int = SEED,
                       confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """Percentile interval of the mean of values; None for no values."""
    if not values:
        return None
    data = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(data), size=(resamples, len(data)))
    return _quantiles(data[picks].mean(axis=1), confidence)


def paired_difference_interval(values: Sequence[float], reference: Sequence[float], *,
                               resamples: int = RESAMPLES, seed: int = SEED,
                               confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """Interval of mean(values) - mean(reference), resampling the same cases for both."""
    if not values or len(values) != len(reference):
        return None
    return bootstrap_interval([v - r for v, r in zip(values, reference)], resamples=resamples, seed=seed,
                              confidence=confidence)


def _hit(rank: int | None, k: int) -> float:
    return 1.0 if rank is not None and rank <= k else 0.0


def _rr(rank: int | None) -> float:
    return 1.0 / rank if rank else 0.0


def case_values(cases: Sequence[dict[str, Any]], retrieval_types: Collection[str]) -> dict[str, dict[str, float]]:
    """metric → case id → the case's value; a case counts only for the metrics it can score."""
    page: dict[str, Callable[[int | None], float]] = {
        "page_recall@1": lambda r: _hit(r, 1), "page_recall@5": lambda r: _hit(r, 5),
        "page_recall@10": lambda r: _hit(r, 10), "page_mrr": _rr,
    }
    values: dict[str, dict[str, float]] = {name: {} for name in [*page, "must_abstain_recall", "false_abstention",
                                                                 "fact_coverage"]}
    for case in cases:
        if case["type"] in retrieval_types:
            for name, score in page.items():
                values[name][case["id"]] = score(case.get("page_hit_rank"))
        if case.get("fact_coverage") is not None:
            values["fact_coverage"][case["id"]] = float(case["fact_coverage"])
        _proxy_values(values, case)
        if "action" not in case:
            continue  # retrieval-only arms say nothing about abstention
        escalated = 1.0 if case["action"] == "escalated" else 0.0
        if case["type"] == "must_abstain":
            values["must_abstain_recall"][case["id"]] = escalated
        elif case["type"] in retrieval_types:
            values["false_abstention"][case["id"]] = escalated
    return values


def _proxy_values(values: dict[str, dict[str, float]], case: dict[str, Any]) -> None:
    # The reader proxies (evaluation/proxies.py), resampled like fact coverage, each case its own
    # value; entered only when a case carries them: a report written before the proxies has none to bound.
    if case.get("answer_precision") is not None:
        values.setdefault("answer_precision", {})[case["id"]] = float(case["answer_precision"])
    if case.get("turn_contamination") is not None:
        values.setdefault("turn_contamination", {})[case["id"]] = 1.0 if case["turn_contamination"] else 0.0
    if case.get("noise") is not None:
        values.setdefault("noise_rate", {})[case["id"]] = 1.0 if any(case["noise"].values()) else 0.0


def _summary(by_case: dict[str, float], **options: Any) -> dict[str, Any] | None:
    if not by_case:
        return None
    values = list(by_case.values())
    low, high = bootstrap_interval(values, **options) or (0.0, 0.0)
    return {"value": round(sum(values) / len(values), 4), "low": round(low, 4), "high": round(high, 4),
            "n": len(values)}


def compare(values: dict[str, dict[str, float]], base: dict[str, dict[str, float]], *, k_metric: str = "page_recall@5",
            **options: Any) -> dict[str, Any]:
    """Cases this arm scores higher on `k_metric` than the base (wins: the right page in the top 5
    that the base misses; for fact_coverage, more of the must-contain facts), and the reverse."""
    mine, theirs = values.get(k_metric, {}), base.get(k_metric, {})
    shared = [case_id for case_id in mine if case_id in theirs]
    wins = [c for c in shared if mine[c] > theirs[c]]
    losses = [c for c in shared if mine[c] < theirs[c]]
    delta = paired_difference_interval([mine[c] for c in shared], [theirs[c] for c in shared], **options)
    mean_delta = sum(mine[c] - theirs[c] for c in shared) / len(shared) if shared else 0.0
    return {"metric": k_metric, "wins": wins, "losses": losses, "ties": len(shared) - len(wins) - len(losses),
            "delta": {"value": round(mean_delta, 4), "low": round(delta[0], 4) if delta else None,
                      "high": round(delta[1], 4) if delta else None}}


def report_intervals(report: dict[str, Any], *, retrieval_types: Collection[str], resamples: int = RESAMPLES,
                     seed: int = SEED, confidence: float = CONFIDENCE) -> dict[str, Any]:
    """The `intervals` block of an eval report: per arm, per metric, and against the first arm run."""
    options: dict[str, Any] = {"resamples": resamples, "seed": seed, "confidence": confidence}
    ran = {arm: case_values(data["cases"], retrieval_types) for arm, data in report["arms"].items()
           if not data.get("skipped") and data.get("cases")}
    base_arm = next(iter(ran), None)
    block: dict[str, Any] = {"method": METHOD, "resamples": resamples, "seed": seed, "confidence": confidence,
                             "base_arm": base_arm, "arms": {}, "against_base": {}}
    for arm, values in ran.items():
        block["arms"][arm] = {name: _summary(by_case, **options) for name, by_case in values.items()}
        if base_arm is not None and arm != base_arm:
            # An answer-side change moves facts, not pages: its cases are compared on both.
            block["against_base"][arm] = {**compare(values, ran[base_arm], **options),
                                          "facts": compare(values, ran[base_arm], k_metric="fact_coverage", **options)}
    return block
