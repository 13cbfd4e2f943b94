"""Each encoder backend on the same 2,000 chunks of the PostgreSQL manual.

    .venv/bin/python bench/encoder.py [--chunks 2000] [--backends torch,onnx,onnx-int8]

The chunks are the ingest's own (parsed and chunked as `manage.py ingest` does), a stride
sample over the whole manual so every part of it is in. Each backend runs in its own process
(so its peak resident memory is its own): load, warm up, encode every chunk at
EMBEDDING_BATCH_SIZE, then the search path's two encoder calls: one question (the query
vector) and the late-interaction rerank's one call over a question and 20 chunks (token
embeddings), each repeated. Reports chunks/s, p50 of the two search calls, peak RSS, and each
backend's cosine with PyTorch's vector per chunk (min, 1st percentile, mean). Other work on
the machine moves the wall-clock numbers: the load average is recorded before and after.
Writes bench/results/encoder.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MANUAL = Path("/usr/share/doc/postgresql-doc-15/html")
QUESTIONS = ["How do I create a partial index?", "What does VACUUM FULL lock?",
             "How can I change the default tablespace of a database?", "what is work_mem used for"]


def setup() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import django

    django.setup()


def manual_chunks(count: int) -> list[str]:
    from django.conf import settings

    from corpus.ingest.chunking import chunk_sections
    from corpus.encoders.embedding import get_encoder
    from corpus.ingest.flow import collect_files, parse_all
    from corpus.parsers import ParsedDocument

    files, *_ = collect_files([MANUAL])
    texts: list[str] = []
    for parsed in parse_all(sorted(files, key=lambda f: str(f.path)), source_type="doc"):
        if isinstance(parsed, ParsedDocument):
            drafts = chunk_sections(parsed.sections, counter=get_encoder(), target=settings.CHUNK_TARGET_TOKENS)
            texts.extend(d.content for d in drafts)
    if len(texts) < count:
        raise SystemExit(f"the manual gave {len(texts)} chunks, fewer than {count}")
    return [texts[int(i * len(texts) / count)] for i in range(count)]


def p50_ms(call: object, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        call()  # type: ignore[operator]
        times.append((time.perf_counter() - t0) * 1000)
    return round(statistics.median(times), 1)


def worker(backend: str, texts_path: Path, vectors_path: Path) -> dict[str, object]:
    """One backend in this process: what it costs to load, encode and serve a search."""
    os.environ["EMBEDDING_BACKEND"] = backend
    setup()
    from django.conf import settings

    from corpus.encoders.embedding import get_encoder

    texts = json.loads(texts_path.read_text())
    t0 = time.perf_counter()
    encoder = get_encoder()
    load_seconds = time.perf_counter() - t0
    encoder.encode(texts[:64])  # warm-up: first-call allocations are not throughput
    t0 = time.perf_counter()
    vectors = encoder.encode(texts, batch_size=settings.EMBEDDING_BATCH_SIZE)
    seconds = time.perf_counter() - t0
    np.save(vectors_path, vectors)
    candidates = texts[:20]
    return {
        "backend": backend, "identity": encoder.identity, "chunks": len(texts),
        "load_seconds": round(load_seconds, 2), "encode_seconds": round(seconds, 2),
        "chunks_per_s": round(len(texts) / seconds, 2),
        "query_encode_ms_p50": p50_ms(lambda: [encoder.encode_one(q) for q in QUESTIONS], 5) / len(QUESTIONS),
        "rerank_token_embeddings_ms_p50": p50_ms(lambda: encoder.token_embeddings([QUESTIONS[0], *candidates]), 5),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def agreement(vectors: np.ndarray, reference: np.ndarray) -> dict[str, float]:
    cosines = (vectors * reference).sum(axis=1)
    return {"min": round(float(cosines.min()), 4), "p1": round(float(np.percentile(cosines, 1)), 4),
            "mean": round(float(cosines.mean()), 5)}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=2000)
    parser.add_argument("--backends", default="torch,onnx,onnx-int8")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "encoder.json")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--texts", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--vectors", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.texts, args.vectors)))
        return 0
    setup()
    backends = args.backends.split(",")
    scratch = Path(tempfile.mkdtemp(prefix="bench-encoder-"))
    texts_path = scratch / "texts.json"
    texts_path.write_text(json.dumps(manual_chunks(args.chunks)))
    results: dict[str, object] = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "chunks": args.chunks, "source": str(MANUAL), "load_average_before": list(os.getloadavg()), "backends": {},
    }
    vectors: dict[str, np.ndarray] = {}
    for backend in backends:
        out = subprocess.run([sys.executable, __file__, "--worker", backend, "--texts", str(texts_path),
                              "--vectors", str(scratch / f"{backend}.npy")], capture_output=True, text=True)
        if out.returncode:
            raise SystemExit(f"{backend} failed:\n{out.stderr[-3000:]}")
        row = json.loads(out.stdout.strip().splitlines()[-1])
        row["load_average_after"] = list(os.getloadavg())
        vectors[backend] = np.load(scratch / f"{backend}.npy")
        results["backends"][backend] = row  # type: ignore[index]
        print(json.dumps(row), flush=True)
    if "torch" in vectors:
        base = results["backends"]["torch"]  # type: ignore[index]
        for backend, row in results["backends"].items():  # type: ignore[union-attr]
            row["cosine_with_torch"] = agreement(vectors[backend], vectors["torch"])
            row["speedup_vs_torch"] = round(row["chunks_per_s"] / base["chunks_per_s"], 2)
    results["load_average_after"] = list(os.getloadavg())
    out_path = args.out
    out_path.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
