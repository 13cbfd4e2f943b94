"""Smaller token states, replayed on the developer sets before any storage format changes.

The ingest stores int8 token states (docs/decisions/0063): 55 kB a chunk, 5.5 GB at 100k
chunks. Each variant here re-quantises the stored int8 rows in memory, then reranks each
case's shipped head with them: the first RETRIEVAL_RERANK_DEPTH fused candidates, which is
what the reranker is handed. It reports page recall@k and MRR against int8, with the
case-level wins and losses. Nothing is written, and no setting changes. A variant that keeps
the numbers on both sets would then get a storage format and a real eval.

    python bench/states_compression.py --set pgdocs-dev:pgdocs --set djangodocs-dev:djangodocs
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import numpy as np

from harness import ROOT
from rank_sweep import Row, page_rank, rank_cells, replay_sets

Quantiser = Callable[[np.ndarray], np.ndarray]


def levels(bits: int) -> Quantiser:
    """Per-row scale, symmetric uniform levels: `bits` bits a component plus a 2-byte scale a row."""
    top = 2 ** (bits - 1) - 1

    def quantise(rows: np.ndarray) -> np.ndarray:
        scale = np.abs(rows).max(axis=1, keepdims=True) / top
        return np.rint(rows / np.maximum(scale, 1e-9)) * scale
    return quantise


def sign(rows: np.ndarray) -> np.ndarray:
    """One bit a component: MaxSim then compares the signs' agreement."""
    return np.where(rows >= 0, 1.0, -1.0).astype(np.float32)


# Bytes a word piece, at 384 dimensions.
VARIANTS: dict[str, tuple[Quantiser | None, int]] = {
    "int8 (stored)": (None, 384),
    "4-bit, per-row scale": (levels(4), 192 + 2),
    "3-bit, per-row scale": (levels(3), 144 + 2),
    "2-bit, per-row scale": (levels(2), 96 + 2),
    "1-bit sign": (sign, 48),
}


def measure(golden_name: str, tenant_slug: str) -> dict[str, object]:
    from django.conf import settings
    from django.test import override_settings

    from evaluation.golden import load_golden
    from evaluation.locators import matches, tenant_chunks
    from retrieval.rerankers import get_reranker
    from retrieval.rerankers.stored import stored_token_states
    from retrieval.search import search
    from tenants.models import Tenant
    from tenants.readers import reader_scope

    golden = load_golden(ROOT / "evaluation" / "golden" / f"{golden_name}.yaml")
    tenant = Tenant.objects.get(slug=tenant_slug)
    chunks = tenant_chunks(tenant)
    scope = reader_scope(tenant=tenant, audiences=[golden.audience])
    reranker = get_reranker("late_interaction")
    depth = settings.RETRIEVAL_RERANK_DEPTH
    cases = [c for c in golden.cases if c.expected and c.type not in ("must_abstain", "tenant_probe", "audience_probe")]
    ranks: dict[str, dict[str, int | None]] = {name: {} for name in VARIANTS}
    missing = 0
    started = time.monotonic()
    for n, case in enumerate(cases, 1):
        with override_settings(RETRIEVAL_MAX_CHUNKS_PER_DOCUMENT=0):  # every fused candidate, before diversity
            result = search(scope=scope, query=case.question, ts_config=tenant.text_search_config, rerank="off",
                            k=1000)
        head, tail = result.candidates[:depth], result.candidates[depth:]
        stored = stored_token_states(scope, [c.chunk_id for c in head])
        missing += sum(s is None for s in stored)
        for name, (quantise, _) in VARIANTS.items():
            states = [s if s is None or quantise is None else quantise(s) for s in stored]
            logits = [s.logit for s in reranker.score(result.query, [c.content for c in head], token_states=states)]
            order = sorted(range(len(head)), key=lambda i: -logits[i])
            rows = [Row(page=any(matches(loc, chunks[c.chunk_id], page_level=True) for loc in case.expected),
                        document=c.document_id, fused_rank=0, logit=None)
                    for c in [head[i] for i in order] + tail]
            ranks[name][case.id] = page_rank(rows)
        print(f"\r{golden_name}: {n}/{len(cases)} cases, {time.monotonic() - started:.0f} s", end="", file=sys.stderr)
    print(file=sys.stderr)
    return {"golden": golden_name, "tenant": tenant_slug, "cases": len(cases), "candidates_without_states": missing,
            "ranks": ranks}


def summary(run: dict[str, object]) -> list[str]:
    ranks: dict[str, dict[str, int | None]] = run["ranks"]  # type: ignore[assignment]
    base = ranks["int8 (stored)"]
    lines = [f"## {run['golden']} on tenant {run['tenant']} ({run['cases']} answerable cases; "
             f"{run['candidates_without_states']} candidates without states)", "",
             "| states | bytes a word piece | page@1 | page@5 | page@10 | MRR | @5 won / lost vs int8 |",
             "|---|---|---|---|---|---|---|"]
    for name, by_case in ranks.items():
        lines.append(f"| {name} | {VARIANTS[name][1]} | {rank_cells(by_case, base)}")
    return lines


def main() -> None:
    out, text = replay_sets(description=__doc__, default_out=ROOT / "bench" / "results" / "states-compression.json",
                            measure=measure, summary=summary)
    out.with_suffix(".md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
