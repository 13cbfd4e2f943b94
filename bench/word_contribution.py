"""What each lacking word does to the question's cosine with its context, measured as a gate signal.

    .venv/bin/python bench/word_contribution.py bench/results/gate-{pgdocs,djangodocs,helpwise,paylane}-0067.json

0042 and 0064 asked how close a lacking word is to the context (its token's best cosine, or the
word alone against the context's words) and found paraphrases ("throttled" of rate limits) and
absent topics ("cash" of a payments manual) interleaved. This asks a different question: does
the word pull the question towards the context or away from it? The question is encoded again
with the word's spans removed; the word's contribution is

    best cosine(question, evidence chunks) - best cosine(question without the word, evidence chunks)

A paraphrase of what the pages say should pull towards them (> 0); a topic they never treat
should pull away (< 0): "Can Helpwise automatically translate incoming tickets?" without
"translate" is a question about automations, which the context is. The product reads only the
top-IDF word's pull (retrieval.pull); the other families here are what was measured beside it.

Each report must hold the `hybrid_gate_off` arm; the search each row's trace ran runs again,
as in bench/term_support.py, whose fit and families this extends. docs/decisions/0067 holds
what this printed.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gate_fit import ARM, ANSWERABLE
from harness import ROOT, measured_or_replayed
from term_support import COVERAGE, report

DELTA = [round(float(x), 3) for x in np.arange(-0.15, 0.081, 0.005)]


def chunk_vectors(scope: Any, ids: Sequence[int]) -> np.ndarray:
    from psycopg import sql
    from tenants.scope import ChunkQuery

    rows = scope.fetch(ChunkQuery(select=sql.SQL("c.id, c.embedding::text AS embedding"),
                                  where=sql.SQL("c.id = ANY(%(ids)s)"), params={"ids": list(ids)}))
    found = {int(r["id"]): np.array(json.loads(r["embedding"]), dtype=np.float32) for r in rows}
    matrix = np.stack([found[i] for i in ids])
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def _unit(vector: np.ndarray) -> np.ndarray:
    return vector / max(float(np.linalg.norm(vector)), 1e-9)


def case_terms(scope: Any, tenant: Any, query: str) -> tuple[float, float, list[dict[str, Any]]]:
    from corpus.encoders.embedding import get_encoder
    from django.conf import settings
    from retrieval.legs import bm25_stats
    from retrieval.pull import lexeme_spans, without_spans
    from retrieval.search import search

    result = search(scope=scope, query=query, ts_config=tenant.text_search_config)
    evidence = [c for c in result.candidates[: settings.ANSWER_CONTEXT_CHUNKS] if c.evidence != "weak"]
    stats = bm25_stats(scope, result.terms.all, result.terms.weights)
    idf, df = dict(stats.idf), dict(stats.df)
    found = {t for c in evidence for t in c.matched_terms}
    if not evidence:
        return result.query_coverage, 0.0, [{"term": t, "idf": idf.get(t, 0.0), "df": df.get(t, 0), "found": False,
                                             "delta": None, "delta_top": None, "shift": None} for t in result.terms.all]
    spans = lexeme_spans(query, ts_config=tenant.text_search_config)
    for correction in result.corrections:
        spans.setdefault(correction.corrected, spans.get(correction.original, []))
    vectors = chunk_vectors(scope, [c.chunk_id for c in evidence])
    encoder = get_encoder()
    question = _unit(encoder.encode_one(query))
    cosines = vectors @ question
    terms = []
    for term in result.terms.all:
        delta = delta_top = shift = None
        if term not in found and spans.get(term):
            ablated = without_spans(query, spans[term])
            if ablated:
                vector = _unit(encoder.encode_one(ablated))
                other = vectors @ vector
                shift = float(1 - vector @ question)
                delta = float(cosines.max() - other.max())
                delta_top = float(cosines[0] - other[0])
        terms.append({"term": term, "idf": round(idf.get(term, 0.0), 4), "df": df.get(term, 0), "found": term in found,
                      "delta": delta, "delta_top": delta_top, "shift": shift})
    return result.query_coverage, float(cosines.max()), terms


def soft_coverage(case: dict[str, Any], kind: str, delta: float) -> float:
    terms = case["terms"]
    total = sum(t["idf"] for t in terms)
    if not total:
        return 0.0
    held = sum(t["idf"] for t in terms if t["found"] or (t[kind] is not None and t[kind] >= delta))
    return held / total


def weakest_rare(case: dict[str, Any], kind: str) -> float:
    """The lowest contribution among the lacking words within half of the question's top IDF."""
    top = max((t["idf"] for t in case["terms"]), default=0.0)
    values = [t[kind] for t in case["terms"] if not t["found"] and t[kind] is not None and t["idf"] >= top / 2]
    return min(values, default=1.0)


def top_lacking(case: dict[str, Any], kind: str) -> float | None:
    """The contribution of the lacking word of highest IDF (the lowest, where several tie)."""
    lacking = [t for t in case["terms"] if not t["found"] and t[kind] is not None]
    if not lacking:
        return None
    top = max(t["idf"] for t in lacking)
    return min(t[kind] for t in lacking if t["idf"] == top)


def unseen_top(case: dict[str, Any]) -> bool:
    """The lacking word of highest IDF is one no chunk of the scope holds."""
    lacking = [t for t in case["terms"] if not t["found"] and t["delta"] is not None]
    if not lacking:
        return False
    top = max(t["idf"] for t in lacking)
    return any(t.get("df", 1) == 0 for t in lacking if t["idf"] == top)


PULL = [round(float(x), 2) for x in np.arange(0.02, 0.31, 0.01)] + [9.0]  # 9: never rescued


def families() -> dict[str, tuple[Any, list[tuple[float, ...]]]]:
    named = lambda x: bool(x["gate"].get("unknown_names"))  # noqa: E731  (0051's rule, kept)
    out: dict[str, tuple[Any, list[tuple[float, ...]]]] = {
        "names | coverage (shipped rule, refitted)": (
            lambda c: lambda x: named(x) or x["coverage"] < c, [(c,) for c in COVERAGE]),
    }
    pulls = lambda x, p: (top_lacking(x, "delta") or -9.0) >= p  # noqa: E731
    out["names | coverage < c, unless the top lacking word pulls >= p"] = (
        lambda c, p: lambda x: named(x) or (x["coverage"] < c and not pulls(x, p)),
        list(itertools.product(COVERAGE, PULL)))
    # The other direction, for helpwise-a004 ("translate" pushes its question away): escalate a
    # question whose top missing word pushes below d, up to coverage c.
    out["names | coverage < 0.26 | coverage < c and the top lacking word pulls < d"] = (
        lambda d, c: lambda x: named(x) or x["coverage"] < 0.26 or (
            x["coverage"] < c and (top_lacking(x, "delta") or 0.0) < d),
        list(itertools.product([d for d in DELTA if d < 0], COVERAGE)))
    # A word the tenant's pages never use at all (df 0) that pushes the question away from what
    # was found: the asked topic is absent, whatever the coverage of the other words (0078).
    shipped = lambda x: named(x) or (x["coverage"] < 0.26 and not pulls(x, 0.12))  # noqa: E731
    out["shipped | an unseen top lacking word pulls < d, up to coverage c"] = (
        lambda d, c: lambda x: shipped(x) or (
            x["coverage"] < c and unseen_top(x) and (top_lacking(x, "delta") or 0.0) < d),
        list(itertools.product([d for d in DELTA if d <= 0.02], [*COVERAGE, 0.7, 0.8, 0.9, 1.01])))
    for kind in ("delta", "delta_top"):
        out[f"names | {kind}-soft coverage"] = (
            lambda d, c, kind=kind: lambda x: named(x) or soft_coverage(x, kind, d) < c,
            list(itertools.product(DELTA, COVERAGE)))
        out[f"names | coverage < c | a rare lacking word's {kind} < d"] = (
            lambda d, c, kind=kind: lambda x: named(x) or x["coverage"] < c or weakest_rare(x, kind) < d,
            list(itertools.product(DELTA, COVERAGE)))
    return out


def measure(paths: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    from answering.models import Trace
    from evaluation.golden import load_golden
    from tenants.models import Tenant
    from tenants.readers import reader_scope
    from tenants.rls import tenant_context

    sets: dict[str, list[dict[str, Any]]] = {}
    for path in paths:
        report = json.loads(Path(path).read_text())
        golden_path = Path(report["golden"])
        golden = load_golden(golden_path if golden_path.is_absolute() else ROOT / golden_path)
        tenant = Tenant.objects.get(slug=report["tenant"])
        scope = reader_scope(tenant=tenant, audiences=[golden.audience])
        rows = [c for c in report["arms"][ARM]["cases"] if "action" in c and c.get("trace_id")
                and c["type"] in (*ANSWERABLE, "must_abstain")]
        for n, row in enumerate(rows, 1):
            with tenant_context(tenant.id):
                trace = Trace.objects.filter(pk=row["trace_id"]).values("retrieval").first()
            query = ((trace or {}).get("retrieval") or {}).get("query")
            if not query:
                raise SystemExit(f"{row['id']}: trace {row['trace_id']} holds no search query")
            coverage, best, terms = case_terms(scope, tenant, query)
            if abs(coverage - (row["gate"].get("query_coverage") or 0.0)) > 0.002:
                print(f"\n  {row['id']}: coverage {coverage:.4f} here, {row['gate'].get('query_coverage')} in the run",
                      file=sys.stderr)
            row.update(query=query, coverage=coverage, best_cosine=best, terms=terms)
            print(f"\r{golden_path.stem}: {n}/{len(rows)}", end="", file=sys.stderr)
        print(file=sys.stderr)
        sets[golden_path.stem] = rows
    return sets


def lacking(sets: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Every low-coverage case's lacking words with their contributions, must-abstain marked."""
    lines = ["\nlacking words of cases with coverage < 0.4 (term idf delta shift):"]
    for name, cases in sets.items():
        for case in cases:
            if case["coverage"] >= 0.4:
                continue
            words = " ".join(f"{t['term']}({t['idf']:.1f} {t['delta']:+.3f} s{t['shift']:.3f})"
                             for t in case["terms"] if not t["found"] and t["delta"] is not None)
            mark = "ABSTAIN" if case["type"] == "must_abstain" else case["action"]
            lines.append(f"  {case['id']:22s} {mark:9s} cov {case['coverage']:.2f} {words}")
    return lines


def unseen(sets: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Every case whose top lacking word no chunk holds, by that word's pull, must-abstain marked."""
    rows = []
    for name, cases in sets.items():
        for case in cases:
            if unseen_top(case):
                words = " ".join(f"{t['term']}({t['delta']:+.3f})" for t in case["terms"]
                                 if not t["found"] and t["delta"] is not None and t.get("df", 1) == 0)
                mark = "ABSTAIN" if case["type"] == "must_abstain" else case["action"]
                named = "named" if case["gate"].get("unknown_names") else ""
                pull = top_lacking(case, "delta") or 0.0
                rows.append((pull, f"  {pull:+.3f} {case['id']:18s} {mark:9s} {named:5s} "
                                   f"cov {case['coverage']:.2f} {words}"))
    return ["\ncases whose top lacking word no chunk holds, by its pull:"] + [line for _, line in sorted(rows)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("reports", nargs="*")
    parser.add_argument("--weight", type=float, default=3.0)
    parser.add_argument("--resamples", type=int, default=100)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "word-contribution.json"))
    parser.add_argument("--replay", action="store_true", help="fit on --out's rows without searching again")
    args = parser.parse_args()
    sets = measured_or_replayed(out=args.out, replay=args.replay, measure=lambda: measure(args.reports))
    print("\n".join(lacking(sets) + unseen(sets) + report(sets, args.weight, args.resamples, families())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
