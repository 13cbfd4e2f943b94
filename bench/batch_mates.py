"""Does a chunk's vector depend on the chunks that share its batch?

    .venv/bin/python bench/batch_mates.py [--chunks 600] [--sizes 16,8,4,1]

The int8 encoder quantises its activations per tensor, one scale for the whole padded batch
(ONNX Runtime's dynamic quantisation), so one text with a large activation coarsens every
other text of its batch. A question is always encoded alone. For each batch size this encodes
the same stride sample of the manual's chunks (the ingest's own chunking, bench/encoder.py),
times it, and compares every vector with the same text encoded alone and with PyTorch's vector.
The float ONNX export is the control: its batched and lone vectors should agree to rounding.
Writes bench/results/batch-mates.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.encoder import agreement, manual_chunks, setup  # noqa: E402
from evaluation.machine import machine_facts  # noqa: E402


def encode(backend: object, texts: list[str], size: int) -> tuple[np.ndarray, float]:
    started = time.perf_counter()
    vectors = backend.embed(texts, batch_size=size)  # type: ignore[attr-defined]
    return vectors, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=600)
    parser.add_argument("--sizes", default="16,8,4,1")
    parser.add_argument("--backends", default="onnx-int8,onnx")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "batch-mates.json")
    args = parser.parse_args()
    setup()
    from corpus.encoders.embedding import model_path
    from corpus.encoders import load_backend

    texts = manual_chunks(args.chunks)
    sizes = [int(s) for s in args.sizes.split(",")]
    reference = load_backend("torch", model_path()).embed(texts, batch_size=16)
    reference /= np.linalg.norm(reference, axis=1, keepdims=True)
    report: dict[str, object] = {"machine": machine_facts(), "chunks": len(texts), "cores": os.cpu_count(),
                                 "load_average_before": list(os.getloadavg()), "backends": {}}
    for name in args.backends.split(","):
        backend = load_backend(name, model_path())
        backend.embed(texts[:32], batch_size=16)  # warm-up: first-call allocations are not throughput
        alone, _ = encode(backend, texts, 1)
        rows = {}
        for size in sizes:
            vectors, seconds = encode(backend, texts, size)
            rows[str(size)] = {"chunks_per_s": round(len(texts) / seconds, 2),
                               "against_alone": agreement(vectors, alone),
                               "against_torch": agreement(vectors, reference)}
            print(name, size, json.dumps(rows[str(size)]), flush=True)
        report["backends"][name] = rows  # type: ignore[index]
    report["load_average_after"] = list(os.getloadavg())
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
