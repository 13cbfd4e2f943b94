"""Ingest throughput next to bare `model.encode` on the same chunk texts.

    .venv/bin/python bench/ingest.py [FOLDER] [--tenant SLUG]

Default folder: the PostgreSQL 15 manual (Debian package postgresql-doc-15, installed by
`make pgdocs`). Ingests into a fresh tenant, then encodes the stored chunk texts with the
bare model (same batch size), and reports chunks/s for both and their ratio: the encoder is
the floor, so the ratio says what parsing, chunking and SQL cost on top. The model is loaded
before either clock starts. Also re-tokenises every stored chunk to prove none exceeds the
model's limit. Writes bench/results/ingest.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

from harness import ROOT, start_django


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder", nargs="?", default="/usr/share/doc/postgresql-doc-15/html")
    parser.add_argument("--tenant", default=f"bench-ingest-{int(time.time())}")
    args = parser.parse_args()
    start_django(own_database=False, migrate=False)
    from django.conf import settings
    from psycopg import sql

    from corpus.encoders.embedding import get_encoder
    from corpus.ingest.flow import ingest_paths
    from tenants import actions
    from tenants.scope import ChunkQuery, TenantScope

    encoder = get_encoder()
    encoder.encode(["warm up"])
    tenant, _ = actions.tenant_get_or_create(slug=args.tenant)
    report = ingest_paths(tenant=tenant, paths=[Path(args.folder)], progress=True, encoder=encoder)
    print(report.summary())

    audiences = actions.audience_ids(tenant=tenant, slugs=["public", "customer", "internal"])
    scope = TenantScope(tenant_id=tenant.id, audience_ids=audiences)
    rows = scope.fetch(ChunkQuery(select=sql.SQL("c.content"), order_by=sql.SQL("c.id")))
    texts = [r["content"] for r in rows]
    t0 = time.perf_counter()
    encoder.backend.embed(texts, batch_size=settings.EMBEDDING_BATCH_SIZE, bulk=True)
    bare_seconds = time.perf_counter() - t0
    bare_rate = len(texts) / bare_seconds
    max_tokens = max(encoder.count_batch(texts)) if texts else 0

    result = {
        "folder": args.folder,
        "tenant": args.tenant,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "documents": report.added + report.changed,
        "chunks": report.chunks,
        "ingest_seconds": round(report.seconds, 2),
        "ingest_chunks_per_s": round(report.chunks_per_second, 2),
        "encode_share_of_ingest": round(report.encode_seconds / report.seconds, 3) if report.seconds else None,
        "bare_encode_seconds": round(bare_seconds, 2),
        "bare_encode_chunks_per_s": round(bare_rate, 2),
        "ratio": round(report.chunks_per_second / bare_rate, 3) if bare_rate else None,
        "max_chunk_tokens": max_tokens,
        "model_limit_tokens": encoder.max_content_tokens,
        "chunk_target_tokens": settings.CHUNK_TARGET_TOKENS,
        "failed": len(report.failed),
        "skipped": report.skipped,
    }
    out = ROOT / "bench" / "results" / "ingest.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0 if max_tokens <= encoder.max_content_tokens else 1


if __name__ == "__main__":
    raise SystemExit(main())
