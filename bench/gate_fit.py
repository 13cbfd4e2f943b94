"""Fit the answer gate's thresholds on eval reports, with leave-one-set-out and bootstrap intervals.

    .venv/bin/python bench/gate_fit.py bench/results/gate-*.json [--weight 3] [--resamples 200]

Each report must hold the `hybrid_gate_off` arm (evaluation/arms.py): the full pipeline with
no gate, each case's row carrying what the gate would have read (query coverage, the best
cosine's margin above the tenant's chance level, the top rerank probability) and what the
answerer did. A gate is replayed exactly on those rows: a case escalates when the gate rule
fires or when the answerer declined anyway.

For each rule family the thresholds are chosen on a grid to minimise, averaged over the sets
(each set counts once, whatever its size), missed must-abstain share + weight x false
abstention share. Reported per set: in-sample with the thresholds fitted on all sets, and
leave-one-set-out (fitted on the other sets, tested on this one). The thresholds' 95%
intervals come from refitting on case-level bootstrap resamples within each set.
docs/decisions/0042 holds the numbers this printed.
"""

from __future__ import annotations

import argparse
import itertools
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ARM = "hybrid_gate_off"
ANSWERABLE = ("normal", "multi_turn", "stale", "conflict")
Case = dict[str, Any]
Rule = Callable[[Case], bool]

COVERAGE = [round(float(x), 2) for x in np.arange(0.0, 0.52, 0.02)]
MARGIN = [round(float(x), 2) for x in np.arange(0.0, 0.46, 0.02)]
RERANK = [0.0, 0.01, 0.02, 0.03, 0.05, 0.08, 0.1, 0.15, 0.2, 0.25]
# The rescue family's grid is coarser: three parameters, refitted per bootstrap resample.
RESCUE_COVERAGE = [0.2, 0.22, 0.24, 0.26, 0.28, 0.3]
RESCUE_MARGIN = [0.3, 0.34, 0.38, 0.42, 0.46, 0.5, 9.0]  # 9: never rescued (coverage alone)
RESCUE_RERANK = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7]


def _num(case: Case, key: str, missing: float) -> float:
    value = case["gate"].get(key)
    return missing if value is None else float(value)


FAMILIES: dict[str, tuple[Callable[..., Rule], list[tuple[float, ...]]]] = {
    "coverage": (lambda c: lambda x: _num(x, "query_coverage", 1) < c, [(c,) for c in COVERAGE]),
    "vector margin": (lambda v: lambda x: _num(x, "vector_margin", 9) < v, [(v,) for v in MARGIN]),
    "rerank": (lambda r: lambda x: _num(x, "top_rerank_probability", 1) < r, [(r,) for r in RERANK]),
    "coverage | vector margin": (
        lambda c, v: lambda x: _num(x, "query_coverage", 1) < c or _num(x, "vector_margin", 9) < v,
        list(itertools.product(COVERAGE, MARGIN))),
    "coverage | rerank": (
        lambda c, r: lambda x: _num(x, "query_coverage", 1) < c or _num(x, "top_rerank_probability", 1) < r,
        list(itertools.product(COVERAGE, RERANK))),
    # Coverage decides unless the two semantic signals agree the top is an answer: a question
    # asked in words the pages do not use ("sandbox throttled" of "rate limits in test mode")
    # has low coverage but a strong cosine and a confident reranker (docs/decisions/0061).
    "coverage unless margin & rerank": (
        lambda c, v, r: lambda x: (_num(x, "query_coverage", 1) < c
                                   and not (_num(x, "vector_margin", -9) >= v
                                            and _num(x, "top_rerank_probability", 0) >= r)),
        list(itertools.product(RESCUE_COVERAGE, RESCUE_MARGIN, RESCUE_RERANK))),
}


def load_sets(paths: Sequence[str]) -> dict[str, list[Case]]:
    sets = {}
    for path in paths:
        report = json.loads(Path(path).read_text())
        rows = [c for c in report["arms"][ARM]["cases"] if "action" in c and c.get("gate")]
        if not rows:
            raise SystemExit(f"{path}: no {ARM} rows with gate signals (run eval with --arms {ARM})")
        sets[Path(report["golden"]).stem] = [c for c in rows if c["type"] in (*ANSWERABLE, "must_abstain")]
    return sets


def outcome(cases: Sequence[Case], rule: Rule) -> tuple[float, float, int, int]:
    """(must-abstain recall, false abstention, must-abstain count, answerable count)."""
    escalated = [rule(c) or c["action"] == "escalated" for c in cases]
    abstain = [e for e, c in zip(escalated, cases) if c["type"] == "must_abstain"]
    answerable = [e for e, c in zip(escalated, cases) if c["type"] != "must_abstain"]
    return (sum(abstain) / max(len(abstain), 1), sum(answerable) / max(len(answerable), 1),
            len(abstain), len(answerable))


def loss(sets: dict[str, list[Case]], rule: Rule, weight: float) -> float:
    scores = []
    for cases in sets.values():
        recall, false, _, _ = outcome(cases, rule)
        scores.append((1 - recall) + weight * false)
    return float(np.mean(scores))


def fit(sets: dict[str, list[Case]], family: str, weight: float) -> tuple[float, ...]:
    make, grid = FAMILIES[family]
    return min(grid, key=lambda p: (loss(sets, make(*p), weight), p))


def bootstrap(sets: dict[str, list[Case]], family: str, weight: float, resamples: int) -> list[tuple[float, float]]:
    rng = np.random.default_rng(16)
    fitted = []
    for _ in range(resamples):
        sample = {name: [cases[i] for i in rng.integers(0, len(cases), len(cases))] for name, cases in sets.items()}
        fitted.append(fit(sample, family, weight))
    values = np.array(fitted, dtype=float)
    return [(float(np.percentile(values[:, i], 2.5)), float(np.percentile(values[:, i], 97.5)))
            for i in range(values.shape[1])]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("reports", nargs="+")
    parser.add_argument("--weight", type=float, default=3.0, help="cost of a false abstention vs a miss")
    parser.add_argument("--resamples", type=int, default=200)
    parser.add_argument("--family", action="append", help="only these rule families")
    args = parser.parse_args()
    sets = load_sets(args.reports)
    none = lambda case: False  # noqa: E731  (the answerer alone)
    print("answerer alone:", "  ".join(f"{n} {r:.2f}/{f:.3f}" for n, (r, f, _, _) in
                                        ((n, outcome(c, none)) for n, c in sets.items())))
    for family in args.family or FAMILIES:
        make, _ = FAMILIES[family]
        params = fit(sets, family, args.weight)
        intervals = bootstrap(sets, family, args.weight, args.resamples)
        print(f"\n{family}: fitted {params}, 95% bootstrap " +
              ", ".join(f"[{lo:.2f}, {hi:.2f}]" for lo, hi in intervals))
        for name, cases in sets.items():
            recall, false, n_abstain, n_answerable = outcome(cases, make(*params))
            others = {k: v for k, v in sets.items() if k != name}
            held = fit(others, family, args.weight)
            cv_recall, cv_false, _, _ = outcome(cases, make(*held))
            print(f"  {name:16s} in-sample recall {recall:.2f} of {n_abstain}, false {false:.3f} of {n_answerable}"
                  f" | left out: fitted {held} on the others, recall {cv_recall:.2f}, false {cv_false:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
