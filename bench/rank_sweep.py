"""Rank-order variants replayed on the developer sets: one search and one rerank pass per case.

For each answerable case: the fused candidates (rerank off), the late-interaction logits of
the first DEPTH of them, then every variant below re-ordered offline from those numbers, and
page recall@k / MRR with case-level wins and losses against the shipped order. Nothing here
changes a setting; a variant that wins on both sets is then confirmed by the real eval.

    python bench/rank_sweep.py --set pgdocs-dev:pgdocs --set djangodocs-dev:djangodocs
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness import ROOT, start_django

DEPTH = 40


@dataclass
class Row:
    page: bool
    document: int
    fused_rank: int
    logit: float | None


Order = Callable[[list[Row]], list[Row]]


def shipped(depth: int) -> Order:
    def order(rows: list[Row]) -> list[Row]:
        head = sorted(rows[:depth], key=lambda r: -(r.logit or 0.0))
        return head + rows[depth:]
    return order


def blended(depth: int, k: float, weight: float) -> Order:
    """Reciprocal-rank fusion of the fused order and the rerank order inside the head."""
    def order(rows: list[Row]) -> list[Row]:
        head = rows[:depth]
        by_logit = {id(r): i for i, r in enumerate(sorted(head, key=lambda r: -(r.logit or 0.0)))}
        score = {id(r): 1 / (k + r.fused_rank) + weight / (k + by_logit[id(r)]) for r in head}
        return sorted(head, key=lambda r: -score[id(r)]) + rows[depth:]
    return order


VARIANTS: dict[str, Order] = {
    "fused (no rerank)": lambda rows: rows,
    "shipped: rerank top 20": shipped(20),
    "rerank top 10": shipped(10),
    "rerank top 30": shipped(30),
    "rerank top 40": shipped(40),
    **{f"rrf(fused, rerank) top {d}, k {k}, w {w}": blended(d, k, w)
       for d in (20, 40) for k in (5, 20, 60) for w in (1.0, 2.0)},
}


def page_rank(rows: Sequence[Row]) -> int | None:
    """The expected page's place among distinct pages: what the eval counts once search has
    put one chunk per document ahead of the rest (retrieval.search.diversify)."""
    seen: set[int] = set()
    for row in rows:
        if row.document in seen:
            continue
        seen.add(row.document)
        if row.page:
            return len(seen)
    return None


def case_rows(case, tenant, chunks, scope) -> list[Row]:  # type: ignore[no-untyped-def]
    from evaluation.locators import matches
    from retrieval.rerankers import get_reranker
    from retrieval.search import search

    from django.test import override_settings

    # Every fused candidate, in fusion order, before diversity: what the reranker is handed.
    with override_settings(RETRIEVAL_MAX_CHUNKS_PER_DOCUMENT=0):
        result = search(scope=scope, query=case.question, ts_config=tenant.text_search_config, rerank="off", k=1000)
    head = result.candidates[:DEPTH]
    logits = [s.logit for s in get_reranker("late_interaction").score(result.query, [c.content for c in head])]
    return [Row(page=any(matches(loc, chunks[c.chunk_id], page_level=True) for loc in case.expected),
                document=c.document_id, fused_rank=i, logit=logits[i] if i < len(logits) else None)
            for i, c in enumerate(result.candidates)]


def measure(golden_name: str, tenant_slug: str) -> dict[str, object]:
    from evaluation.golden import load_golden
    from evaluation.locators import tenant_chunks
    from tenants.models import Tenant
    from tenants.readers import reader_scope

    golden = load_golden(ROOT / "evaluation" / "golden" / f"{golden_name}.yaml")
    tenant = Tenant.objects.get(slug=tenant_slug)
    chunks = tenant_chunks(tenant)
    scope = reader_scope(tenant=tenant, audiences=[golden.audience])
    cases = [c for c in golden.cases if c.expected and c.type not in ("must_abstain", "tenant_probe", "audience_probe")]
    ranks: dict[str, dict[str, int | None]] = {name: {} for name in VARIANTS}
    started = time.monotonic()
    for n, case in enumerate(cases, 1):
        rows = case_rows(case, tenant, chunks, scope)
        for name, order in VARIANTS.items():
            ranks[name][case.id] = page_rank(order(list(rows)))
        print(f"\r{golden_name}: {n}/{len(cases)} cases, {time.monotonic() - started:.0f} s", end="", file=sys.stderr)
    print(file=sys.stderr)
    return {"golden": golden_name, "tenant": tenant_slug, "cases": len(cases), "ranks": ranks}


def summary(run: dict[str, object]) -> list[str]:
    ranks: dict[str, dict[str, int | None]] = run["ranks"]  # type: ignore[assignment]
    base = ranks["shipped: rerank top 20"]
    lines = [f"## {run['golden']} on tenant {run['tenant']} ({run['cases']} answerable cases)", "",
             "| order | page@1 | page@5 | page@10 | MRR | @5 won / lost vs shipped |", "|---|---|---|---|---|---|"]
    for name, by_case in ranks.items():
        lines.append(f"| {name} | {rank_cells(by_case, base)}")
    return lines


def rank_cells(by_case: dict[str, int | None], base: dict[str, int | None]) -> str:
    """page@1, @5, @10 and MRR of one variant's page ranks, and its @5 wins and losses against `base`."""
    n = len(by_case)
    at = lambda k: sum(1 for r in by_case.values() if r is not None and r <= k) / n  # noqa: E731
    mrr = sum(1 / r for r in by_case.values() if r) / n
    won = [c for c, r in by_case.items() if (r or 99) <= 5 < (base[c] or 99)]
    lost = [c for c, r in by_case.items() if (base[c] or 99) <= 5 < (r or 99)]
    return (f"{at(1):.3f} | {at(5):.3f} | {at(10):.3f} | {mrr:.3f} | "
            f"{len(won)} {sorted(won)} / {len(lost)} {sorted(lost)} |")


def replay_sets(*, description: str, default_out: Path, measure: Callable[[str, str], dict[str, object]],
                summary: Callable[[dict[str, object]], list[str]]) -> tuple[Path, str]:
    """The command line every replay over developer sets shares: `--set golden:tenant` (repeated)
    and `--out`; each set measured, the runs written as JSON, their tables returned as text."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", action="append", required=True, help="golden-name:tenant-slug")
    parser.add_argument("--out", default=str(default_out))
    args = parser.parse_args()
    start_django(own_database=False, migrate=False)
    runs = [measure(*spec.split(":", 1)) for spec in args.set]
    Path(args.out).write_text(json.dumps(runs, indent=1))
    return Path(args.out), "\n".join(line for run in runs for line in [*summary(run), ""])


def main() -> None:
    _, text = replay_sets(description=__doc__, default_out=ROOT / "bench" / "results" / "rank-sweep.json",
                          measure=measure, summary=summary)
    print(text)


if __name__ == "__main__":
    main()
