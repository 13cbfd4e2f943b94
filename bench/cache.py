"""Cache-hit latency with 10k entries: exact and semantic lookups (goal: p95 <= 20 ms).

    .venv/bin/python bench/cache.py [--entries 10000] [--lookups 300]

Uses its own embedded database (var/bench-pgdata). Entries get clustered random vectors; a
semantic probe is a stored vector nudged slightly (cosine ~0.97) under a different query text.
Writes bench/results/cache.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

from harness import ROOT, start_django


def spell(number: int) -> str:
    """Digits as letters: a query with digits is an identifier query and never semantic."""
    return "".join("abcdefghij"[int(d)] for d in str(number))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--lookups", type=int, default=300)
    args = parser.parse_args()
    start_django(own_database=True, migrate=True)
    import numpy as np
    from tqdm import tqdm

    from cachelayer import service
    from evaluation.metrics import percentile
    from tenants import actions

    tenant, created = actions.tenant_get_or_create(slug="bench-cache-words")
    audiences = actions.audience_ids(tenant=tenant, slugs=["public"])
    rng = np.random.default_rng(11)
    vectors = rng.standard_normal((args.entries, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    if created:
        for i in tqdm(range(args.entries), desc="entries"):
            service.store(tenant_id=tenant.id, audience_ids=audiences, query=f"how do I configure feature {spell(i)}",
                          query_vector=vectors[i], generator="extractive",
                          answer=f"answer {i}", sources=[], conflict=False, provider="", model="", trace_id=None,
                          cost_usd=0.0, chunk_ids=[])  # no chunks: a store citing dead ones is skipped

    def timed(kind: str) -> dict[str, float]:
        samples, hits = [], 0
        for n in range(args.lookups):
            i = int(rng.integers(0, args.entries))
            if kind == "exact":
                query, vector = f"How do I configure feature {spell(i)}?", vectors[i]
            else:
                noisy = vectors[i] + 0.012 * rng.standard_normal(384).astype(np.float32)
                # No digits: a query with an identifier never takes the semantic path.
                query, vector = f"semantic probe {spell(n)}", noisy / np.linalg.norm(noisy)
            started = time.perf_counter()
            hit = service.lookup(tenant_id=tenant.id, audience_ids=audiences, query=query, query_vector=vector,
                                 generator="extractive")
            samples.append((time.perf_counter() - started) * 1000)
            hits += hit is not None and hit.kind == kind
        return {"p50_ms": round(percentile(samples, 50), 2), "p95_ms": round(percentile(samples, 95), 2),
                "hit_rate": round(hits / args.lookups, 3)}

    result = {"machine": f"{platform.machine()}, {os.cpu_count()} cores", "entries": args.entries,
              "exact": timed("exact"), "semantic": timed("semantic")}
    (ROOT / "bench" / "results" / "cache.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
