"""Compare arms at the same false-abstention rate, not at one floor.

    .venv/bin/python bench/abstention_curve.py REPORT.json \
        --base coverage_open --against OTHER_coverage_open \
        --labels "coverage_open=the defaults,OTHER_coverage_open=the variant" \
        --svg docs/img/abstention.svg --json bench/results/abstention.json

(0062 compared the Czech key schemes this way; those arms were removed with the schemes.)

Each arm must have run with the gate's coverage floor at zero and every other rule kept
(evaluation/arms.py, `*coverage_open`): its rows record the question coverage, and a case
escalated there escalates at any floor. So a floor f is replayed exactly: a case escalates
when it escalated in the run or its coverage is below f.

A scheme whose keys match few words refuses answerable questions for the same reason it
refuses must-abstain ones, so at one floor it can "win" must-abstain recall by refusing
everything. Here the base arm sits at the shipped floor, each other arm at the highest floor
whose false-abstention rate does not exceed the base's, and the paired difference in
must-abstain recall gets a case-level bootstrap interval (answerable and must-abstain cases
resampled separately). The other way round, the base's lowest floor that catches as many
must-abstain cases as the other arm does at the shipped floor, and what it refuses there.
docs/decisions/0062 holds what this printed.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

ANSWERABLE = ("normal", "multi_turn", "stale", "conflict")
FLOORS = [round(x, 2) for x in np.arange(0.0, 1.01, 0.01)]
COLOURS = ("#1f6feb", "#d1242f", "#8250df", "#1a7f37", "#bf8700")


def load_rows(report: dict[str, Any], arm: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(coverage, escalated in the run) for answerable and for must-abstain cases, in case order."""
    cases = sorted(report["arms"][arm]["cases"], key=lambda c: c["id"])
    if any(c["gate"].get("query_coverage") is None for c in cases if c["type"] in ANSWERABLE + ("must_abstain",)):
        raise SystemExit(f"arm {arm}: a row has no recorded query coverage")

    def part(kinds: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
        rows = [c for c in cases if c["type"] in kinds]
        return (np.array([c["gate"]["query_coverage"] for c in rows], dtype=float),
                np.array([c["action"] != "answered" for c in rows], dtype=bool))

    return (*part(ANSWERABLE), *part(("must_abstain",)))


def rates(rows: tuple[np.ndarray, ...], floor: float, pick: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[float, float]:
    """(false-abstention rate, must-abstain recall) at this floor, on resampled indices if given."""
    cov_a, esc_a, cov_m, esc_m = rows
    refused = esc_a | (cov_a < floor)
    caught = esc_m | (cov_m < floor)
    if pick is not None:
        refused, caught = refused[pick[0]], caught[pick[1]]
    return float(refused.mean()), float(caught.mean())


def matched_floor(rows: tuple[np.ndarray, ...], target_fa: float) -> float:
    """The highest floor whose false-abstention rate does not exceed the target."""
    return max((f for f in FLOORS if rates(rows, f)[0] <= target_fa + 1e-12), default=0.0)


def floor_for_recall(rows: tuple[np.ndarray, ...], target_ma: float) -> float | None:
    """The lowest floor whose must-abstain recall reaches the target (None: no floor does)."""
    return min((f for f in FLOORS if rates(rows, f)[1] >= target_ma - 1e-12), default=None)


def compare(report: dict[str, Any], base: str, against: list[str], floor: float, resamples: int,
            seed: int) -> dict[str, Any]:
    base_rows = load_rows(report, base)
    base_fa, base_ma = rates(base_rows, floor)
    rng = np.random.default_rng(seed)
    n_a, n_m = len(base_rows[0]), len(base_rows[2])
    picks = [(rng.integers(0, n_a, n_a), rng.integers(0, n_m, n_m)) for _ in range(resamples)]
    out: dict[str, Any] = {"base": {"arm": base, "floor": floor, "false_abstention": base_fa,
                                    "must_abstain_recall": base_ma, "answerable": n_a, "must_abstain": n_m},
                           "against": {}}
    for arm in against:
        rows = load_rows(report, arm)
        at_floor = rates(rows, floor)
        matched = matched_floor(rows, base_fa)
        fa, ma = rates(rows, matched)
        deltas = [rates(base_rows, floor, p)[1] - rates(rows, matched, p)[1] for p in picks]
        low, high = np.percentile(deltas, [2.5, 97.5])
        # The other way round: what the base refuses to catch as many as this arm does.
        base_floor = floor_for_recall(base_rows, at_floor[1])
        base_at_recall = None if base_floor is None else dict(zip(
            ("false_abstention", "must_abstain_recall"), rates(base_rows, base_floor)), floor=base_floor)
        out["against"][arm] = {
            "at_base_floor": {"false_abstention": at_floor[0], "must_abstain_recall": at_floor[1]},
            "matched_floor": matched, "false_abstention": fa, "must_abstain_recall": ma,
            "base_minus_arm_recall": {"value": base_ma - ma, "low": float(low), "high": float(high)},
            "base_at_this_arms_recall": base_at_recall,
        }
    return out


def svg_chart(report: dict[str, Any], arms: list[str], floor: float, title: str,
              labels: dict[str, str] | None = None) -> str:
    """False-abstention rate (x) against must-abstain recall (y) as the floor rises, per arm."""
    width, height, pad = 560, 400, 56
    x = lambda v: pad + v * (width - 1.6 * pad)  # noqa: E731
    y = lambda v: height - pad - v * (height - 1.8 * pad)  # noqa: E731
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="sans-serif" font-size="12" role="img" aria-label="{title}">',
             f'<text x="{pad}" y="20" font-size="14">{title}</text>']
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(f'<line x1="{x(tick):.1f}" y1="{y(0):.1f}" x2="{x(tick):.1f}" y2="{y(1):.1f}" stroke="#eee"/>')
        parts.append(f'<line x1="{x(0):.1f}" y1="{y(tick):.1f}" x2="{x(1):.1f}" y2="{y(tick):.1f}" stroke="#eee"/>')
        parts.append(f'<text x="{x(tick):.1f}" y="{y(0) + 16:.1f}" text-anchor="middle">{tick:.2f}</text>')
        parts.append(f'<text x="{x(0) - 6:.1f}" y="{y(tick) + 4:.1f}" text-anchor="end">{tick:.2f}</text>')
    parts.append(f'<text x="{x(0.5):.1f}" y="{height - 12}" text-anchor="middle">false abstention '
                 '(answerable questions escalated)</text>')
    parts.append(f'<text x="14" y="{y(0.5):.1f}" transform="rotate(-90 14 {y(0.5):.1f})" '
                 'text-anchor="middle">must-abstain recall</text>')
    for index, arm in enumerate(arms):
        rows, colour = load_rows(report, arm), COLOURS[index % len(COLOURS)]
        points = " ".join(f"{x(fa):.1f},{y(ma):.1f}" for fa, ma in (rates(rows, f) for f in FLOORS))
        parts.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>')
        fa, ma = rates(rows, floor)
        parts.append(f'<circle cx="{x(fa):.1f}" cy="{y(ma):.1f}" r="4" fill="{colour}"/>')
        parts.append(f'<text x="{x(0.55):.1f}" y="{y(0.3) + 16 * index:.1f}" fill="{colour}">{(labels or {}).get(arm, arm)} '
                     f'(dot: floor {floor})</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("report")
    parser.add_argument("--base", required=True)
    parser.add_argument("--against", required=True, help="comma-separated arms")
    parser.add_argument("--floor", type=float, default=0.26, help="the base arm's floor (the shipped one)")
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--labels", default="", help="arm=label,... for the chart's legend")
    parser.add_argument("--svg")
    parser.add_argument("--json")
    args = parser.parse_args()
    report = json.loads(Path(args.report).read_text())
    against = [a for a in args.against.split(",") if a]
    result = compare(report, args.base, against, args.floor, args.resamples, args.seed)
    print(json.dumps(result, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    if args.svg:
        Path(args.svg).parent.mkdir(parents=True, exist_ok=True)
        Path(args.svg).write_text(svg_chart(report, [args.base, *against], args.floor,
                                            f"{report.get('golden', '')}: abstention as the coverage floor rises",
                                            dict(item.split("=", 1) for item in args.labels.split(",") if item)))


if __name__ == "__main__":
    main()
