"""The reranker's head ordered by a weighed sum of the signals the search already has.

    .venv/bin/python bench/learned_order.py --set pgdocs-dev:pgdocs --set djangodocs-dev:djangodocs ...
    .venv/bin/python bench/learned_order.py --replay

The late-interaction reranker orders the fused head by MaxSim alone. Where the expected page
is lost on the untuned sets it is mostly lost there (0072: pgdev2-004, -023, -026 fused 2-8,
reranked out of the top 5). Every candidate already carries other evidence: its bi-encoder
cosine, its two legs' ranks, the IDF share of the question's words it holds. Here each case's
fused candidates (rerank off, no diversity, as rank_sweep.py) are stored with those signals
and the late-interaction logit of the first DEPTH; orders are then replayed offline:

    score = a * z(logit) + b * z(cosine) + c * z(keyword coverage) + d * z(RRF score)

with z taken within the case's head (each question's scores live on their own scale). The
weights are fitted on a grid for mean page MRR over the sets, in-sample and leaving each set
out; page ranks count one chunk per document, as the eval does. docs/decisions/0079.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from typing import Any

import numpy as np

from harness import ROOT, measured_or_replayed

DEPTH = 20
FEATURES = ("logit", "cosine", "coverage", "rrf")
GRID = (0.0, 0.25, 0.5, 1.0)


def case_rows(case: Any, tenant: Any, chunks: Any, scope: Any) -> list[dict[str, Any]]:
    from django.test import override_settings

    from evaluation.locators import matches
    from retrieval.rerankers import get_reranker
    from retrieval.search import search

    with override_settings(RETRIEVAL_MAX_CHUNKS_PER_DOCUMENT=0):
        result = search(scope=scope, query=case.question, ts_config=tenant.text_search_config, rerank="off", k=200)
    head = result.candidates[:DEPTH]
    logits = [s.logit for s in get_reranker("late_interaction").score(result.query, [c.content for c in head])]
    return [{"page": any(matches(loc, chunks[c.chunk_id], page_level=True) for loc in case.expected),
             "document": c.document_id, "logit": logits[i], "cosine": c.vector_similarity,
             "coverage": c.keyword_coverage, "rrf": c.fused_score}
            for i, c in enumerate(head)] + [
            {"page": any(matches(loc, chunks[c.chunk_id], page_level=True) for loc in case.expected),
             "document": c.document_id, "logit": None} for c in result.candidates[DEPTH:]]


def measure(golden_name: str, tenant_slug: str) -> list[dict[str, Any]]:
    from evaluation.golden import load_golden
    from evaluation.locators import tenant_chunks
    from tenants.models import Tenant
    from tenants.readers import reader_scope

    golden = load_golden(ROOT / "evaluation" / "golden" / f"{golden_name}.yaml")
    tenant = Tenant.objects.get(slug=tenant_slug)
    chunks = tenant_chunks(tenant)
    scope = reader_scope(tenant=tenant, audiences=[golden.audience])
    cases = [c for c in golden.cases if c.expected and c.type not in ("must_abstain", "tenant_probe", "audience_probe")]
    out, started = [], time.monotonic()
    for n, case in enumerate(cases, 1):
        out.append({"id": case.id, "rows": case_rows(case, tenant, chunks, scope)})
        print(f"\r{golden_name}: {n}/{len(cases)} cases, {time.monotonic() - started:.0f} s", end="", file=sys.stderr)
    print(file=sys.stderr)
    return out


def _z(values: np.ndarray) -> np.ndarray:
    spread = values.std()
    return (values - values.mean()) / spread if spread > 1e-9 else np.zeros_like(values)


def page_rank(case: dict[str, Any], weights: tuple[float, ...]) -> int | None:
    rows = case["rows"]
    head = [r for r in rows if r["logit"] is not None]
    score = sum(w * _z(np.array([r[f] for r in head], dtype=float)) for w, f in zip(weights, FEATURES) if w)
    order = [head[i] for i in np.argsort(-np.asarray(score), kind="stable")] if len(head) else []
    seen: set[int] = set()
    for row in order + rows[len(head):]:
        if row["document"] in seen:
            continue
        seen.add(row["document"])
        if row["page"]:
            return len(seen)
    return None


def metrics(cases: list[dict[str, Any]], weights: tuple[float, ...]) -> dict[str, float]:
    ranks = [page_rank(c, weights) for c in cases]
    n = max(len(ranks), 1)
    at = lambda k: sum(1 for r in ranks if r is not None and r <= k) / n  # noqa: E731
    return {"@1": at(1), "@5": at(5), "@10": at(10), "mrr": sum(1 / r for r in ranks if r) / n}


def fit(sets: dict[str, list[dict[str, Any]]]) -> tuple[float, ...]:
    grid = [w for w in itertools.product(GRID, repeat=len(FEATURES)) if any(w)]
    return max(grid, key=lambda w: (float(np.mean([metrics(c, w)["mrr"] for c in sets.values()])), -sum(w)))


def report(sets: dict[str, list[dict[str, Any]]]) -> list[str]:
    shipped = (1.0, 0.0, 0.0, 0.0)
    fitted = fit(sets)
    lines = [f"fitted on all sets (weights for {', '.join(FEATURES)}): {fitted}", "",
             "| set | order | @1 | @5 | @10 | MRR | @5 won / lost vs shipped |", "|---|---|---|---|---|---|---|"]
    for name, cases in sets.items():
        held = fit({k: v for k, v in sets.items() if k != name})
        base = {c["id"]: page_rank(c, shipped) for c in cases}
        for label, weights in (("shipped (logit)", shipped), (f"fitted {fitted}", fitted), (f"left out {held}", held)):
            m = metrics(cases, weights)
            ranks = {c["id"]: page_rank(c, weights) for c in cases}
            won = sorted(c for c, r in ranks.items() if (r or 99) <= 5 < (base[c] or 99))
            lost = sorted(c for c, r in ranks.items() if (base[c] or 99) <= 5 < (r or 99))
            lines.append(f"| {name} | {label} | {m['@1']:.3f} | {m['@5']:.3f} | {m['@10']:.3f} | {m['mrr']:.3f} |"
                         f" {len(won)} {' '.join(won)} / {len(lost)} {' '.join(lost)} |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", action="append", default=[], help="golden-name:tenant-slug")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "learned-order.json"))
    parser.add_argument("--replay", action="store_true", help="fit on --out's rows without searching again")
    args = parser.parse_args()
    sets = measured_or_replayed(out=args.out, replay=args.replay, indent=None, measure=lambda: {
        spec.split(":", 1)[0]: measure(*spec.split(":", 1)) for spec in args.set})
    print("\n".join(report(sets)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
