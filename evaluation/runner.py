"""Run a golden set against a tenant, arm by arm, and report metrics side by side."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.test.utils import override_settings
from tqdm import tqdm

from evaluation.arms import ARMS
from evaluation.golden import GoldenSet
from evaluation.locators import ChunkInfo, matches, resolve, tenant_chunks
from evaluation.metrics import first_hit_rank, mean, ndcg_at, percentile, recall_at, reciprocal_rank
from retrieval.search import search
from tenants.models import Tenant
from tenants.readers import reader_scope

RETRIEVAL_TYPES = ("normal", "multi_turn", "stale", "conflict")


@dataclass
class ArmReport:
    arm: str
    metrics: dict[str, float | None] = field(default_factory=dict)
    cases: list[dict[str, Any]] = field(default_factory=list)


def retrieval_question(case: Any) -> str:
    """Until query rewriting runs here, a follow-up is searched with the user's earlier turns."""
    earlier = [t["content"] for t in case.history if t["role"] == "user"]
    return " ".join([*earlier[-2:], case.question]) if earlier else case.question


def run_retrieval_arm(*, golden: GoldenSet, tenant: Tenant, arm: str, ks: Sequence[int] = (1, 3, 5, 10),
                      progress: bool = False, chunks: dict[int, ChunkInfo] | None = None) -> tuple[ArmReport, list[str]]:
    if arm not in ARMS:
        raise ValueError(f"unknown arm {arm!r}; known: {', '.join(ARMS)}")
    options = dict(ARMS[arm])
    overrides = options.pop("settings", {})
    chunks = chunks if chunks is not None else tenant_chunks(tenant)
    relevant, errors = resolve(golden, chunks)
    scope = reader_scope(tenant=tenant, audiences=[golden.audience])
    report = ArmReport(arm=arm)
    depth = max(ks)
    latencies: list[float] = []
    per_case: list[dict[str, Any]] = []
    cases = [c for c in golden.cases if c.type in RETRIEVAL_TYPES]
    with override_settings(**overrides):
        for case in tqdm(cases, desc=f"{golden.tenant}/{arm}", disable=not progress, unit="case"):
            started = time.perf_counter()
            result = search(scope=scope, query=retrieval_question(case), ts_config=tenant.text_search_config,
                            k=depth, **options)
            latencies.append((time.perf_counter() - started) * 1000)
            ranked = [c.chunk_id for c in result.candidates]
            rank = first_hit_rank(ranked, relevant[case.id])
            page_ids = {cid for cid, info in chunks.items() if any(matches(l, info, page_level=True) for l in case.expected)}
            page_rank = first_hit_rank(ranked, page_ids)
            per_case.append({
                "id": case.id, "type": case.type, "hit_rank": rank, "page_hit_rank": page_rank,
                "retrieved": [f"{c.source_type}:{c.slug}#{c.heading_path}" for c in result.candidates[:5]],
                "expected": [l.describe() for l in case.expected],
                "corrections": [f"{c.original}->{c.corrected}" for c in result.corrections],
            })
    ranks = [c["hit_rank"] for c in per_case]
    page_ranks = [c["page_hit_rank"] for c in per_case]
    for k in ks:
        report.metrics[f"recall@{k}"] = round(mean([recall_at(r, k) for r in ranks]), 4)
    for k in ks:
        report.metrics[f"page_recall@{k}"] = round(mean([recall_at(r, k) for r in page_ranks]), 4)
    report.metrics["mrr"] = round(mean([reciprocal_rank(r) for r in ranks]), 4)
    report.metrics["ndcg@10"] = round(mean([ndcg_at(r, 10) for r in ranks]), 4)
    report.metrics["latency_ms_p50"] = round(percentile(latencies, 50), 1)
    report.metrics["latency_ms_p95"] = round(percentile(latencies, 95), 1)
    report.metrics["cases"] = len(per_case)
    report.cases = per_case
    return report, errors
