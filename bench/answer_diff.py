"""What an answer-side change did, set by set: fact coverage case by case against the first arm.

    .venv/bin/python bench/answer_diff.py bench/results/eval-*-0084-code.json [--base 'bench/results/eval-{set}-0084.json'] [--json out.json]

A change to the answerer leaves retrieval alone, so its arms should retrieve the same chunks
for every case; the script checks that first (a case whose retrieved list differs is reported,
since its fact coverage then says nothing about the answerer). Then, per arm against the
report's first arm, or the first arm of another run of the same install (`--base`: an answer-side
change made outside any setting is measured against a run of the code before it): fact coverage
with a paired bootstrap interval on the difference (evaluation.intervals), the cases that gained
or lost a fact, the answered count and the cases that quoted a forbidden string.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evaluation.intervals import bootstrap_interval, paired_difference_interval  # noqa: E402


def _facts(cases: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in cases if c.get("fact_coverage") is not None}


def compare_arm(cases: list[dict[str, Any]], base: list[dict[str, Any]]) -> dict[str, Any]:
    mine, theirs = _facts(cases), _facts(base)
    shared = [case_id for case_id in mine if case_id in theirs]
    a = [float(mine[c]["fact_coverage"]) for c in shared]
    b = [float(theirs[c]["fact_coverage"]) for c in shared]
    delta = paired_difference_interval(a, b)
    interval = bootstrap_interval(a)
    retrieved_differs = [c["id"] for c, o in zip(cases, base) if c.get("retrieved") != o.get("retrieved")]
    return {
        "fact_coverage": round(sum(a) / len(a), 4) if a else None,
        "interval": [round(x, 4) for x in interval] if interval else None,
        "base": round(sum(b) / len(b), 4) if b else None,
        "delta": round((sum(a) - sum(b)) / len(a), 4) if a else None,
        "delta_interval": [round(x, 4) for x in delta] if delta else None,
        "gained": [c for c in shared if mine[c]["fact_coverage"] > theirs[c]["fact_coverage"]],
        "lost": [c for c in shared if mine[c]["fact_coverage"] < theirs[c]["fact_coverage"]],
        "answered": sum(1 for c in cases if c.get("action") == "answered"),
        "forbidden": [c["id"] for c in cases if c.get("forbidden")],
        "retrieved_differs": retrieved_differs,
        "n": len(shared),
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("reports", nargs="+")
    parser.add_argument("--base", help="the run to compare against, its first arm (default: each report's own first "
                                       "arm); {set} is the golden set's name")
    parser.add_argument("--json")
    args = parser.parse_args()
    out: dict[str, Any] = {}
    for path in args.reports:
        report = json.loads(Path(path).read_text())
        name = Path(report["golden"]).stem
        arms = {k: v for k, v in report["arms"].items() if v.get("cases")}
        base = json.loads(Path(args.base.format(set=name)).read_text()) if args.base else report
        base_arm, base_data = next((k, v) for k, v in base["arms"].items() if v.get("cases"))
        rows = {arm: compare_arm(data["cases"], base_data["cases"]) for arm, data in arms.items()}
        out[name] = {"base_arm": base_arm, "arms": rows}
        print(f"== {name} (against {base_arm})")
        for arm, row in rows.items():
            print(f"  {arm:32s} facts {row['fact_coverage']} {row['interval']}  Δ {row['delta']:+.3f} "
                  f"{row['delta_interval']}  +{len(row['gained'])} −{len(row['lost'])}  answered {row['answered']}"
                  f"  forbidden {len(row['forbidden'])}  retrieval differs on {len(row['retrieved_differs'])}")
            if row["gained"] or row["lost"]:
                print(f"  {'':32s} gained {row['gained']} lost {row['lost']}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
