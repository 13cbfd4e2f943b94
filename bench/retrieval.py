"""Retrieval latency and filtered HNSW recall on a synthetic 100k-chunk table.

    .venv/bin/python bench/retrieval.py [--chunks 100000] [--queries 200]

Uses its own embedded database (var/bench-pgdata) so the product's data stays untouched.
Ten tenants of unequal size (the smallest owns 1% of rows); texts are drawn from a Zipf
vocabulary so BM25 statistics look like a real corpus; vectors come from a mixture of
Gaussians (clustered, like real embeddings, where uniform random vectors would make HNSW
look worse than it is). Measures:
- p50/p95 of query embedding + both legs + fusion + evidence (search(), no reranker),
  at 10k and at 100k chunks;
- filtered recall@10 against exact search for the smallest tenant: of the vector leg as the
  product runs it (its cost model picks exact or HNSW per scope), of the HNSW path forced with
  iterative scans (the number that says whether the index itself keeps a 1% tenant's
  neighbours), and of a plain HNSW scan without iterative scans for comparison.
Writes bench/results/retrieval.json.

    .venv/bin/python bench/retrieval.py --tenant pgdocs --golden evaluation/golden/pgdocs-dev.yaml

measures instead search() on a real tenant of the product's own database (var/pgdata), the
golden set's questions asked `--rounds` times per rerank mode (off, conditional, always):
p50/p95 and per-stage p50/p95, written to bench/results/retrieval-<tenant>.json
(docs/decisions/0043).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# The synthetic run has a database of its own; --tenant reads the product's (var/pgdata).
if "--tenant" not in sys.argv:
    os.environ.setdefault("ANSWERDESK_PGDATA", str(ROOT / "var" / "bench-pgdata"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

SHARES = [0.01, 0.02, 0.03, 0.05, 0.07, 0.09, 0.12, 0.15, 0.20, 0.26]
WORDS = 5000
CLUSTERS = 200


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--tenant", help="measure this tenant of the product's database instead")
    parser.add_argument("--golden", help="with --tenant: the golden set whose questions are asked")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rerank", action="store_true",
                        help="one 100k table (--chunks) whose rows carry token states (0063), searched with "
                        "reranking off and always; writes bench/results/retrieval-rerank-100k.json")
    parser.add_argument("--growth", help="comma-separated table sizes (100000,300000,1000000): grow one table "
                        "to each and measure there; writes bench/results/retrieval-growth.json")
    args = parser.parse_args()
    if args.tenant:
        return real_tenant(args.tenant, args.golden, args.rounds)

    from config.embedded_db import ensure_running

    if not os.environ.get("DATABASE_URL"):
        ensure_running()
    import django

    django.setup()
    import numpy as np
    from django.core.management import call_command
    from psycopg import sql
    from tqdm import tqdm

    from corpus.models import Document
    from evaluation.metrics import percentile
    from django.conf import settings

    from retrieval.config import RetrievalConfig
    from retrieval.legs import choose_vector_path, vector_leg, vector_text
    from retrieval.search import search
    from tenants import actions
    from tenants.models import Tenant
    from tenants.scope import ChunkQuery, TenantScope
    from tenants.writer import ChunkRow, ChunkWriter
    from corpus.language.terms import exact_terms
    from corpus.encoders.embedding import get_encoder
    from corpus.encoders.token_states import pack

    call_command("migrate", verbosity=0)
    rng = np.random.default_rng(7)
    vocabulary = [f"w{i}" for i in range(WORDS)]
    zipf = 1.0 / np.arange(1, WORDS + 1)
    zipf /= zipf.sum()
    centers = rng.standard_normal((CLUSTERS, 384)).astype(np.float32)
    # With --rerank every row stores token states: 122 word pieces and [CLS]/[SEP], like a
    # chunk of the manual. A pool of 64 is cycled; MaxSim costs the same whatever the values.
    state_pool = [pack(rng.standard_normal((124, 384)).astype(np.float32), bits=4) for _ in range(64)] if args.rerank else []

    def vectors(n: int) -> np.ndarray:
        base = centers[rng.integers(0, CLUSTERS, n)] + 0.6 * rng.standard_normal((n, 384)).astype(np.float32)
        return base / np.linalg.norm(base, axis=1, keepdims=True)

    def build(total: int, prefix: str) -> list[Tenant]:
        tenants = []
        for index, share in enumerate(SHARES):
            slug = f"{prefix}-{index}"
            tenant, created = actions.tenant_get_or_create(slug=slug)
            tenants.append(tenant)
            if not created:
                continue
            audience = actions.audience_ids(tenant=tenant, slugs=["public"])[0]
            count = max(100, int(total * share))
            writer = ChunkWriter(tenant_id=tenant.id)
            per_doc = 100
            for start in tqdm(range(0, count, per_doc), desc=slug, leave=False):
                n = min(per_doc, count - start)
                vecs = vectors(n)
                words = rng.choice(vocabulary, size=(n, 120), p=zipf)
                with writer.rls_context() as cursor:
                    doc = Document.objects.create(tenant=tenant, audience_id=audience, slug=f"doc-{start}",
                                                  title=f"Doc {start}", content_hash="bench")
                    writer.insert(cursor, [
                        ChunkRow(document_id=doc.pk, audience_id=audience, ordinal=i, heading_path=f"Doc {start}",
                                 content=" ".join(words[i]), token_count=120, embedding=vecs[i],
                                 ts_config="simple", exact_terms=exact_terms(f"E{start + i}"),
                                 token_states=state_pool[(start + i) % len(state_pool)] if state_pool else None)
                        for i in range(n)
                    ])
        return tenants

    def scope_of(tenant: Tenant) -> TenantScope:
        return TenantScope(tenant_id=tenant.id, audience_ids=actions.audience_ids(tenant=tenant, slugs=["public"]))

    def latency(tenants: list[Tenant], rerank: str = "off") -> dict[str, object]:
        encoder = get_encoder()
        encoder.encode_one("warm up")
        for tenant in tenants:  # one uncounted query per tenant: a serving process is warm
            search(scope=scope_of(tenant), query="how do I configure w1", ts_config="simple", k=10, rerank=rerank)
        timings = []
        stages: dict[str, list[float]] = {}
        for q in range(args.queries):
            tenant = tenants[q % len(tenants)]
            scope = scope_of(tenant)
            words = " ".join(rng.choice(vocabulary, size=6, p=zipf))
            started = time.perf_counter()
            result = search(scope=scope, query=f"how do I configure {words}", ts_config="simple", k=10,
                            rerank=rerank)
            timings.append((time.perf_counter() - started) * 1000)
            for stage, ms in result.timings_ms.items():
                stages.setdefault(stage, []).append(ms)
        return {
            "p50_ms": round(percentile(timings, 50), 1), "p95_ms": round(percentile(timings, 95), 1),
            "stages_p50_p95_ms": {stage: [round(percentile(v, 50), 1), round(percentile(v, 95), 1)]
                                  for stage, v in stages.items() if stage != "total" and (rerank != "off" or stage != "rerank")},
        }

    def filtered_recall(tenant: Tenant, path: str, fetch: int = 10) -> float:
        scope = TenantScope(tenant_id=tenant.id, audience_ids=actions.audience_ids(tenant=tenant, slugs=["public"]))
        hits = 0
        total = 0
        for query_vector in vectors(50):
            exact = scope.fetch(ChunkQuery(
                select=sql.SQL("c.id"), order_by=sql.SQL("c.embedding <=> %(v)s::vector, c.id"), limit=10,
                params={"v": vector_text(query_vector)},
                local_settings={"enable_indexscan": "off"},
            ))
            if path in ("auto", "hnsw"):
                approx = [h.chunk_id for h in vector_leg(scope, query_vector, limit=fetch, path=path,
                                                             ef_search=RetrievalConfig.from_settings().hnsw_ef_search)][:10]
            else:
                approx = [r["id"] for r in scope.fetch(ChunkQuery(
                    select=sql.SQL("c.id"), order_by=sql.SQL("c.embedding <=> %(v)s::vector"), limit=10,
                    params={"v": vector_text(query_vector)},
                    local_settings={"hnsw.iterative_scan": "off", "hnsw.ef_search": "100", "enable_seqscan": "off",
                                    "enable_sort": "off"},
                ))]
            hits += len({r["id"] for r in exact} & set(approx))
            total += len(exact)
        return round(hits / total, 4)

    if args.rerank:
        tenants = build(args.chunks, "rerank100k")
        measured = {"machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
                    "queries": args.queries, "chunks_built": args.chunks,
                    "load_average_before": list(os.getloadavg())}
        for mode in ("off", "always"):
            measured[f"rerank_{mode}"] = latency(tenants, rerank=mode)
            print(mode, json.dumps(measured[f"rerank_{mode}"]), flush=True)
        measured["load_average_after"] = list(os.getloadavg())
        (ROOT / "bench" / "results" / "retrieval-rerank-100k.json").write_text(json.dumps(measured, indent=2) + "\n")
        return 0
    if args.growth:
        return growth([int(n) for n in args.growth.split(",")], build, latency, args.queries)
    results: dict[str, object] = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "queries": args.queries,
    }
    for label, total in (("10k", args.chunks // 10), ("100k", args.chunks)):
        t0 = time.perf_counter()
        tenants = build(total, f"bench{label}")
        results[f"build_{label}_seconds"] = round(time.perf_counter() - t0, 1)
        results[f"latency_{label}"] = latency(tenants)
        results[f"filtered_recall@10_smallest_tenant_{label}"] = filtered_recall(tenants[0], "auto")
        results[f"filtered_recall@10_smallest_tenant_{label}_hnsw_iterative"] = filtered_recall(tenants[0], "hnsw")
        # What the product does on that path: the leg fetches RETRIEVAL_CANDIDATES_PER_LEG (40)
        # neighbours, sorted by true distance; the top 10 of those.
        results[f"filtered_recall@10_smallest_tenant_{label}_hnsw_iterative_top10_of_40"] = filtered_recall(
            tenants[0], "hnsw", fetch=settings.RETRIEVAL_CANDIDATES_PER_LEG)
        results[f"filtered_recall@10_smallest_tenant_{label}_without_iterative_scan"] = filtered_recall(
            tenants[0], "plain")
        results[f"vector_path_by_tenant_{label}"] = {
            t.slug: choose_vector_path(visible=scope_of(t).corpus_totals()[0], table_rows=scope_of(t).table_rows(),
                                       limit=settings.RETRIEVAL_CANDIDATES_PER_LEG,
                                       ef_search=settings.RETRIEVAL_HNSW_EF_SEARCH)
            for t in tenants
        }
        print(label, json.dumps(results, indent=1))
    out = ROOT / "bench" / "results" / "retrieval.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))
    return 0


def growth(targets: list[int], build: Any, latency: Any, queries: int) -> int:
    """Grow one chunk table through `targets` total rows; at each size, search() p50/p95 on the
    ten tenants just added (their largest owns 26% of that step), with the table's and the HNSW
    index's size and the load average, since other work shares the two cores."""
    from django.db import connections
    from psycopg import sql

    from tenants.scope import CHUNK_TABLE

    def sizes() -> dict[str, int]:
        # Row-level security hides every row from a count; ANALYZE's row count reads no row.
        with connections["owner"].cursor() as cursor:
            cursor.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(CHUNK_TABLE)).as_string(None))
            cursor.execute("SELECT reltuples::bigint, pg_table_size(oid), pg_total_relation_size(oid),"
                           " pg_relation_size(%(index)s::regclass) FROM pg_class WHERE oid = %(table)s::regclass",
                           {"table": CHUNK_TABLE, "index": f"{CHUNK_TABLE}_embedding_hnsw"})
            rows, table, total, hnsw = cursor.fetchone()
        return {"chunks": max(0, rows), "table_bytes": table, "hnsw_bytes": hnsw, "total_bytes": total}

    results: dict[str, Any] = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "queries_per_step": queries, "steps": [],
    }
    out = ROOT / "bench" / "results" / "retrieval-growth.json"
    for target in targets:
        present = sizes()["chunks"]
        started = time.perf_counter()
        tenants = build(max(0, target - present), f"growth{target // 1000}k")
        built = time.perf_counter() - started
        step = {"target": target, **sizes(), "build_seconds": round(built, 1),
                "load_average_before": list(os.getloadavg()), "latency": latency(tenants),
                "load_average_after": list(os.getloadavg())}
        step["hnsw_bytes_per_100k_chunks"] = round(step["hnsw_bytes"] * 100_000 / max(1, step["chunks"]))
        results["steps"].append(step)
        out.write_text(json.dumps(results, indent=2) + "\n")
        print(json.dumps(step, indent=1), flush=True)
    return 0


def real_tenant(slug: str, golden_path: str, rounds: int) -> int:
    """search() latency per rerank mode on a real corpus, questions from a golden set."""
    from config.embedded_db import ensure_running

    if not os.environ.get("DATABASE_URL"):
        ensure_running()
    import django

    django.setup()
    from evaluation.golden import load_golden
    from evaluation.metrics import percentile
    from retrieval.search import search
    from tenants.models import Tenant
    from tenants.readers import reader_scope

    golden = load_golden(golden_path)
    tenant = Tenant.objects.get(slug=slug)
    scope = reader_scope(tenant=tenant, audiences=[golden.audience])
    questions = [c.question for c in golden.cases if c.type in ("normal", "multi_turn", "must_abstain")]
    results: dict[str, object] = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "tenant": slug, "golden": golden_path, "questions": len(questions), "rounds": rounds,
        "load_average_at_start": list(os.getloadavg()),
    }
    for mode in ("off", "conditional", "always"):
        search(scope=scope, query=questions[0], ts_config=tenant.text_search_config, rerank=mode)  # warm
        timings: list[float] = []
        stages: dict[str, list[float]] = {}
        for _ in range(rounds):
            for question in questions:
                started = time.perf_counter()
                result = search(scope=scope, query=question, ts_config=tenant.text_search_config, rerank=mode)
                timings.append((time.perf_counter() - started) * 1000)
                for stage, ms in result.timings_ms.items():
                    stages.setdefault(stage, []).append(ms)
        results[f"rerank_{mode}"] = {
            "p50_ms": round(percentile(timings, 50), 1), "p95_ms": round(percentile(timings, 95), 1),
            "stages_p50_p95_ms": {stage: [round(percentile(v, 50), 1), round(percentile(v, 95), 1)]
                                  for stage, v in stages.items() if stage != "total"},
        }
        print(mode, json.dumps(results[f"rerank_{mode}"]))
    results["load_average_at_end"] = list(os.getloadavg())
    out = ROOT / "bench" / "results" / f"retrieval-{slug}.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
