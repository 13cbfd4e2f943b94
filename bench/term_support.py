"""Soft support of the question's words that the context lacks, measured as a gate signal.

    .venv/bin/python bench/term_support.py bench/results/gate-{pgdocs,djangodocs,helpwise,paylane}-0064.json

The gate's coverage counts a question word only when its lexeme is in an evidence chunk, so a
paraphrase ("is the sandbox throttled?" of a page on rate limits) covers as little as a question
about something the pages never treat ("business loans" of a payments company). Here each lacking
word gets a soft support, two ways:

- token: its word pieces' best cosine among the context chunks' token states (the ones the
  ingest stores for the reranker, docs/decisions/0063), averaged over the pieces;
- word: the word encoded alone against each distinct word of the context encoded alone (a
  static word similarity from the same encoder).

Each report must hold the `hybrid_gate_off` arm. For each row the search the pipeline ran (its
trace's query) runs again and its coverage is checked against the row's. Soft coverage is
sum(idf * [found or support >= tau]) / sum(idf); the gate "an unknown name, or soft coverage < c"
(and 0042's per-word form, "or a rare lacking word's support < s") is fitted with bench/gate_fit.py's loss, in-sample and leave-one-set-out, beside the shipped
rule (lexical coverage) refitted on the same rows. docs/decisions/0064 holds what this printed.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gate_fit import ARM, ANSWERABLE, bootstrap, fit, outcome
from harness import ROOT, measured_or_replayed

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]+")
TAU = [round(float(x), 2) for x in np.arange(0.30, 0.86, 0.05)]
COVERAGE = [round(float(x), 2) for x in np.arange(0.0, 0.62, 0.02)]


def lexeme_words(text: str, ts_config: str) -> dict[str, list[tuple[int, int]]]:
    """Where in `text` each lexeme's words stand, by PostgreSQL's own parser and stemmer."""
    from retrieval.pull import lexeme_spans

    return lexeme_spans(text, ts_config=ts_config)


def _unit(matrix: Any) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    return matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-9)


class WordVectors:
    """Words encoded alone, kept across cases."""

    def __init__(self) -> None:
        self.cache: dict[str, np.ndarray] = {}

    def of(self, words: Sequence[str]) -> np.ndarray:
        from corpus.encoders.embedding import get_encoder

        new = sorted({w for w in words if w not in self.cache})
        if new:
            for word, vector in zip(new, _unit(get_encoder().encode(new))):
                self.cache[word] = vector
        return np.stack([self.cache[w] for w in words]) if words else np.zeros((0, 384), np.float32)


def case_terms(scope: Any, tenant: Any, query: str, words: WordVectors) -> tuple[float, list[dict[str, Any]]]:
    from corpus.encoders.embedding import get_encoder
    from django.conf import settings
    from retrieval.rerankers.stored import stored_token_states
    from retrieval.search import search

    result = search(scope=scope, query=query, ts_config=tenant.text_search_config)
    evidence = [c for c in result.candidates[: settings.ANSWER_CONTEXT_CHUNKS] if c.evidence != "weak"]
    stats_idf = _idf(scope, result)
    found = {t for c in evidence for t in c.matched_terms}
    spans = lexeme_words(query, tenant.text_search_config)
    for correction in result.corrections:  # a corrected lexeme stands where its original did
        spans.setdefault(correction.corrected, spans.get(correction.original, []))
    terms = []
    if not evidence:
        return result.query_coverage, [{"term": t, "idf": stats_idf.get(t, 0.0), "found": False, "token": None,
                                        "word": None} for t in result.terms.all]
    encoder = get_encoder()
    offsets = encoder.token_offsets(query)
    states = stored_token_states(scope, [c.chunk_id for c in evidence])
    for i, s in enumerate(states):
        if s is None:
            states[i] = encoder.token_embeddings([evidence[i].content])[0]
    question = _unit(encoder.token_embeddings([query])[0])[1:-1]
    best = (question @ _unit(np.concatenate(states)).T).max(axis=1)
    vocabulary = sorted({w.lower() for c in evidence for w in _WORD.findall(c.heading_path + " " + c.content)})
    context_words = words.of(vocabulary)
    for term in result.terms.all:
        token = word = None
        if term not in found:
            tokens, alone = [], []
            for start, end in spans.get(term, ()):
                pieces = [i for i, (a, b) in enumerate(offsets[: len(best)]) if a < end and b > start]
                if pieces:
                    tokens.append(float(best[pieces].mean()))
                alone.append(float((words.of([query[start:end].lower()]) @ context_words.T).max()))
            token = max(tokens) if tokens else None
            word = max(alone) if alone else None
        terms.append({"term": term, "idf": round(stats_idf.get(term, 0.0), 4), "found": term in found,
                      "token": token, "word": word})
    return result.query_coverage, terms


def _idf(scope: Any, result: Any) -> dict[str, float]:
    from retrieval.legs import bm25_stats

    return dict(bm25_stats(scope, result.terms.all, result.terms.weights).idf)


def soft_coverage(case: dict[str, Any], kind: str, tau: float) -> float:
    terms = case["terms"]
    total = sum(t["idf"] for t in terms)
    if not total:
        return 0.0
    held = sum(t["idf"] for t in terms if t["found"] or (t[kind] is not None and t[kind] >= tau))
    return held / total


def weakest_rare(case: dict[str, Any], kind: str) -> float:
    """The lowest support among the lacking words within half of the question's top IDF."""
    top = max((t["idf"] for t in case["terms"]), default=0.0)
    supports = [t[kind] for t in case["terms"] if not t["found"] and t[kind] is not None and t["idf"] >= top / 2]
    return min(supports, default=1.0)


WEAKEST = [round(float(x), 2) for x in np.arange(0.10, 0.42, 0.02)]


def families() -> dict[str, tuple[Any, list[tuple[float, ...]]]]:
    named = lambda x: bool(x["gate"].get("unknown_names"))  # noqa: E731  (0051's rule, kept)
    return {
        "names | coverage (shipped rule, refitted)": (
            lambda c: lambda x: named(x) or x["coverage"] < c, [(c,) for c in COVERAGE]),
        "names | token-soft coverage": (
            lambda tau, c: lambda x: named(x) or soft_coverage(x, "token", tau) < c,
            list(itertools.product(TAU, COVERAGE))),
        "names | word-soft coverage": (
            lambda tau, c: lambda x: named(x) or soft_coverage(x, "word", tau) < c,
            list(itertools.product(TAU, COVERAGE))),
        # 0042's per-word form: one rare lacking word too far from every context token.
        "names | coverage 0.26 | a rare lacking word's token support < s": (
            lambda w: lambda x: named(x) or x["coverage"] < 0.26 or weakest_rare(x, "token") < w,
            [(w,) for w in WEAKEST]),
    }


def measure(paths: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    from evaluation.golden import load_golden
    from tenants.models import Tenant
    from tenants.readers import reader_scope
    from tenants.rls import tenant_context

    from answering.models import Trace

    words = WordVectors()
    sets: dict[str, list[dict[str, Any]]] = {}
    for path in paths:
        report = json.loads(Path(path).read_text())
        golden = load_golden(ROOT / report["golden"]) if not Path(report["golden"]).is_absolute() else load_golden(Path(report["golden"]))
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
            coverage, terms = case_terms(scope, tenant, query, words)
            if abs(coverage - (row["gate"].get("query_coverage") or 0.0)) > 0.002:
                print(f"\n  {row['id']}: coverage {coverage:.4f} here, {row['gate'].get('query_coverage')} in the run",
                      file=sys.stderr)
            row.update(query=query, coverage=coverage, terms=terms)
            print(f"\r{Path(path).stem}: {n}/{len(rows)}", end="", file=sys.stderr)
        print(file=sys.stderr)
        sets[Path(report["golden"]).stem] = rows
    return sets


def report(sets: dict[str, list[dict[str, Any]]], weight: float, resamples: int,
           rules: dict[str, tuple[Any, list[tuple[float, ...]]]] | None = None) -> list[str]:
    """Each rule family fitted in-sample and left-one-set-out (`rules`: families() here)."""
    none = lambda case: False  # noqa: E731
    lines = ["answerer alone: " + "  ".join(f"{n} {r:.2f}/{f:.3f}" for n, (r, f, _, _) in
                                            ((n, outcome(c, none)) for n, c in sets.items()))]
    import gate_fit

    for family, (make, grid) in (rules or families()).items():
        gate_fit.FAMILIES[family] = (make, grid)
        params = fit(sets, family, weight)
        intervals = bootstrap(sets, family, weight, resamples)
        lines.append(f"\n{family}: fitted {params}, 95% bootstrap " +
                     ", ".join(f"[{lo:.3f}, {hi:.3f}]" for lo, hi in intervals))
        for name, cases in sets.items():
            recall, false, n_abstain, n_answerable = outcome(cases, make(*params))
            held = fit({k: v for k, v in sets.items() if k != name}, family, weight)
            cv_recall, cv_false, _, _ = outcome(cases, make(*held))
            wrong = [c["id"] for c in cases if (make(*params)(c) or c["action"] == "escalated") != (c["type"] == "must_abstain")]
            lines.append(f"  {name:16s} in {recall:.2f} of {n_abstain} / {false:.3f} of {n_answerable}"
                         f" | left out: {held} -> {cv_recall:.2f} / {cv_false:.3f} | wrong in-sample: {' '.join(wrong)}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("reports", nargs="+")
    parser.add_argument("--weight", type=float, default=3.0)
    parser.add_argument("--resamples", type=int, default=100)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "term-support.json"))
    parser.add_argument("--replay", action="store_true", help="fit on --out's rows without searching again")
    args = parser.parse_args()
    sets = measured_or_replayed(out=args.out, replay=args.replay, measure=lambda: measure(args.reports))
    print("\n".join(report(sets, args.weight, args.resamples)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
