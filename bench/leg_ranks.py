"""Where each answerable case's expected page ranks in each retrieval leg and after each stage.

    .venv/bin/python bench/leg_ranks.py evaluation/golden/pgdocs-dev2.yaml [--depth 200] [--json out.json]

For every answerable case with expected pages: the best rank of an expected page in the vector
leg, the keyword leg, the fused list (each leg cut at RETRIEVAL_CANDIDATES_PER_LEG, before the
diversity rule) and the shipped result. Pages are counted in order of first appearance.
A page missing from both legs at depth 200 is a first-stage miss no ranking can fix; a page
both legs hold that the result drops is a ranking miss. Read-only: nothing is written.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402

from corpus.encoders.embedding import get_encoder  # noqa: E402
from evaluation.golden import load_golden  # noqa: E402
from evaluation.locators import tenant_chunks  # noqa: E402
from retrieval.fusion import reciprocal_rank_fusion  # noqa: E402
from retrieval.legs import bm25_stats, keyword_leg, query_terms, vector_leg  # noqa: E402
from retrieval.config import RetrievalConfig  # noqa: E402
from retrieval.search import search  # noqa: E402
from tenants.models import Tenant  # noqa: E402
from tenants.readers import reader_scope  # noqa: E402


def page_rank(ids: list[int], pages: set[str], chunks: dict) -> int | None:
    seen: list[str] = []
    for cid in ids:
        slug = chunks[cid].slug
        if slug not in seen:
            seen.append(slug)
        if slug in pages:
            return len(seen)
    return None


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("golden")
    parser.add_argument("--depth", type=int, default=200)
    parser.add_argument("--json")
    args = parser.parse_args()
    golden = load_golden(args.golden)
    tenant = Tenant.objects.get(slug=golden.tenant)
    scope = reader_scope(tenant=tenant, audiences=[golden.audience])
    chunks = tenant_chunks(tenant)
    encoder = get_encoder()
    rows = []
    for case in golden.cases:
        pages = {loc.document_slug for loc in case.expected}
        if case.type == "must_abstain" or not pages or case.history:
            continue
        terms = query_terms(case.question, ts_config=tenant.text_search_config)
        stats = bm25_stats(scope, terms.all)
        vector = encoder.encode_one(case.question)
        legs = {"vector": [h.chunk_id for h in vector_leg(scope, vector, limit=args.depth, visible=stats.chunk_count,
                                                          ef_search=RetrievalConfig.from_settings().hnsw_ef_search)],
                "keyword": [h.chunk_id for h in keyword_leg(scope, terms.all, stats, limit=args.depth)]}
        per_leg = settings.RETRIEVAL_CANDIDATES_PER_LEG
        fused = [f.chunk_id for f in reciprocal_rank_fusion({k: v[:per_leg] for k, v in legs.items()})]
        shipped = [c.chunk_id for c in search(scope=scope, query=case.question, ts_config=tenant.text_search_config,
                                              k=10).candidates]
        row = {"id": case.id, **{k: page_rank(v, pages, chunks) for k, v in legs.items()},
               "fused": page_rank(fused, pages, chunks), "shipped": page_rank(shipped, pages, chunks)}
        rows.append(row)
        print("  ".join(f"{k} {v}" for k, v in row.items()), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
