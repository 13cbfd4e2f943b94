"""The gate's coverage with each question word weighed by how rare it is in English, not only in the pages.

    .venv/bin/python bench/general_idf.py --rows bench/results/word-contribution-0078.json

The coverage weighs a question word by its IDF in the tenant's pages. Documentation is formal,
so the asker's conversational words are rare there: `really` (IDF 5.6 in the Django docs),
`sometimes`, `front`, `fire`. A question told in the asker's words loses most of its coverage
to them (dj-040: 0.16, escalated; its page is found). Here each word's weight is capped by its
IDF in general English, from wordfreq's Zipf frequency z (log10 of uses per billion words):

    general(z) = ln(1 / (10^(z - 9) * L))

the IDF the word would have in chunks of L words of ordinary English. A word English uses
often (`really`, z 5.97) counts little whichever pages lack it; a name English never uses
(`certbot`) keeps its page IDF. Each row of word_contribution.py's replay file (the
`hybrid_gate_off` arm of each set, its terms with IDF, df and found) is weighed again; the
written word of each lexeme comes from PostgreSQL's parser over the row's query, as in
retrieval.pull. The families are fitted in-sample and leave-one-set-out with gate_fit's loss,
beside the shipped rule refitted on the same rows. docs/decisions/0079 holds what this printed.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
from pathlib import Path
from typing import Any

from harness import ROOT, measured_or_replayed
from term_support import COVERAGE, report

LENGTH = [25, 50, 100, 200, 400]


def written_zipf(path: str) -> dict[str, list[dict[str, Any]]]:
    """word_contribution.py's rows at `path`, each term with its lowest Zipf frequency among
    the words it was written as (0 for none)."""
    from retrieval.pull import lexeme_spans
    from retrieval.search import counts_for_coverage

    try:
        from wordfreq import zipf_frequency
    except ImportError:
        raise SystemExit("measuring needs wordfreq (pip install wordfreq==3.1.1); --replay reads the stored values") from None
    rows: dict[str, list[dict[str, Any]]] = json.loads(Path(path).read_text())
    for cases in rows.values():
        for case in cases:
            spans = lexeme_spans(case["query"], ts_config="english")
            for term in case["terms"]:
                words = [case["query"][a:b] for a, b in spans.get(term["term"], [])]
                term["zipf"] = min((zipf_frequency(w, "en") for w in words), default=0.0)
                term["counted"] = counts_for_coverage(term["term"])
    return rows


def general(zipf: float, length: float) -> float:
    if zipf <= 0:
        return math.inf
    return max(0.0, math.log(1 / (10 ** (zipf - 9) * length)))


def capped_coverage(case: dict[str, Any], length: float, *, missing_only: bool = False) -> float:
    """`missing_only`: a word the context holds keeps its page IDF; only a missing one is capped."""
    weights = [(t["idf"] if missing_only and t["found"] else min(t["idf"], general(t["zipf"], length)), t["found"])
               for t in case["terms"] if t["counted"]]
    total = sum(w for w, _ in weights)
    return sum(w for w, found in weights if found) / total if total else 0.0


def families() -> dict[str, tuple[Any, list[tuple[float, ...]]]]:
    named = lambda x: bool(x["gate"].get("unknown_names"))  # noqa: E731  (0051, 0077)
    pulled = lambda x: (x["gate"].get("lacking_pull") or -9.0) >= 0.12  # noqa: E731  (0067's rescue)
    return {
        "shipped: names | coverage < c unless pulled": (
            lambda c: lambda x: named(x) or (x["coverage"] < c and not pulled(x)), [(c,) for c in COVERAGE]),
        "names | English-capped coverage < c unless pulled": (
            lambda c, n: lambda x: named(x) or (capped_coverage(x, n) < c and not pulled(x)),
            list(itertools.product(COVERAGE, LENGTH))),
        "names | coverage, missing words English-capped, < c unless pulled": (
            lambda c, n: lambda x: named(x) or (capped_coverage(x, n, missing_only=True) < c and not pulled(x)),
            list(itertools.product(COVERAGE, LENGTH))),
    }


def curves(rows: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Must-abstain questions escalated and answerable ones refused, all sets pooled, per threshold."""
    named = lambda x: bool(x["gate"].get("unknown_names"))  # noqa: E731
    pulled = lambda x: (x["gate"].get("lacking_pull") or -9.0) >= 0.12  # noqa: E731
    cases = [c for cs in rows.values() for c in cs]
    coverages = {"shipped": lambda x: x["coverage"]}
    for n in (100, 400):
        coverages[f"capped L={n}"] = lambda x, n=n: capped_coverage(x, n)
        coverages[f"missing capped L={n}"] = lambda x, n=n: capped_coverage(x, n, missing_only=True)
    lines = ["pooled, escalated must-abstain / refused answerable (of "
             f"{sum(c['type'] == 'must_abstain' for c in cases)} / {sum(c['type'] != 'must_abstain' for c in cases)}):"]
    for name, coverage in coverages.items():
        points = []
        for threshold in (0.18, 0.22, 0.26, 0.30, 0.34):
            rule = lambda x, t=threshold, cov=coverage: (  # noqa: E731
                named(x) or x["action"] == "escalated" or (cov(x) < t and not pulled(x)))
            points.append(f"{threshold:.2f}: {sum(rule(c) for c in cases if c['type'] == 'must_abstain')}"
                          f"/{sum(rule(c) for c in cases if c['type'] != 'must_abstain')}")
        lines.append(f"  {name:20s} " + "  ".join(points))
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", default=str(ROOT / "bench" / "results" / "word-contribution-0078.json"))
    parser.add_argument("--weight", type=float, default=3.0)
    parser.add_argument("--resamples", type=int, default=50)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "general-idf.json"))
    parser.add_argument("--replay", action="store_true", help="fit on --out's rows without reading the database")
    args = parser.parse_args()
    rows = measured_or_replayed(out=args.out, replay=args.replay, measure=lambda: written_zipf(args.rows))
    for cases in rows.values():  # the replication check: the shipped coverage from the same terms
        for case in cases:
            weights = [(t["idf"], t["found"]) for t in case["terms"] if t["counted"]]
            total = sum(w for w, _ in weights)
            mine = sum(w for w, f in weights if f) / total if total else 0.0
            if abs(mine - case["coverage"]) > 0.002:
                print(f"{case['id']}: coverage {mine:.4f} from terms, {case['coverage']:.4f} recorded")
    print("\n".join(curves(rows) + report(rows, args.weight, args.resamples, families())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
