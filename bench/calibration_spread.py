"""How far a scope's chance level moves with the sample it is drawn from.

retrieval.calibration measures chance on a seeded sample of headings and chunks. The seed
fixes the sample; another seed is another install's sample when the draw followed ids. This
draws SEEDS samples per size on each tenant and reports the spread of the chance level (and
the build time), which is how far the gate's vector margins move between installs of the same
documents when the sample is not tied to the text (docs/decisions/0066).

    python bench/calibration_spread.py pgdocs djangodocs helpwise paylane \
        --json bench/results/calibration-spread-0066.json --svg docs/img/calibration-spread.svg
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from harness import start_django

SIZES = ((64, 256), (128, 1024), (256, 1024), (512, 1024))
SEEDS = 10


def measure(slug: str) -> list[dict[str, Any]]:
    from retrieval import calibration
    from tenants.models import Tenant
    from tenants.readers import reader_scope

    tenant = Tenant.objects.get(slug=slug)
    scope = reader_scope(tenant=tenant, audiences=["public"])
    count = scope.corpus_totals()[0]
    rows = []
    for questions, chunks in SIZES:
        levels, seconds = [], []
        for seed in range(SEEDS):
            started = time.perf_counter()
            level = calibration.build(scope, chunk_count=count,
                                      draw=calibration.Draw(questions=questions, chunks=chunks, seed=f"-{seed}"))
            seconds.append(time.perf_counter() - started)
            levels.append(level.chance)
        rows.append({"tenant": slug, "chunks_visible": count, "questions": questions, "chunks": chunks,
                     "levels": levels, "mean": statistics.fmean(levels), "sd": statistics.stdev(levels),
                     "range": max(levels) - min(levels), "build_s_median": statistics.median(seconds)})
        print(f"{slug:12} {questions:4}x{chunks:<5} chance {rows[-1]['mean']:.4f} sd {rows[-1]['sd']:.4f} "
              f"range {rows[-1]['range']:.4f} build {rows[-1]['build_s_median']:.2f} s", flush=True)
    return rows


def svg_chart(rows: list[dict[str, Any]]) -> str:
    """One strip per tenant and size: each seed's chance level as a dot."""
    width, left, row_h, top = 720, 190, 22, 30
    levels = [v for r in rows for v in r["levels"]]
    low, high = min(levels) - 0.002, max(levels) + 0.002

    def x(value: float) -> float:
        return left + (value - low) / (high - low) * (width - left - 20)

    height = top + row_h * len(rows) + 30
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             'font-family="sans-serif" font-size="12">',
             f'<text x="{left}" y="18">chance level per seeded sample ({SEEDS} seeds per row)</text>']
    for i, row in enumerate(rows):
        y = top + i * row_h + row_h / 2
        parts.append(f'<text x="4" y="{y + 4}">{row["tenant"]} {row["questions"]}×{row["chunks"]}</text>')
        parts.append(f'<line x1="{left}" x2="{width - 20}" y1="{y}" y2="{y}" stroke="#ddd"/>')
        parts += [f'<circle cx="{x(v):.1f}" cy="{y}" r="3" fill="#3367d6" fill-opacity="0.6"/>'
                  for v in row["levels"]]
    axis_y = top + row_h * len(rows) + 14
    for tick in (low, (low + high) / 2, high):
        parts.append(f'<text x="{x(tick) - 18:.1f}" y="{axis_y}">{tick:.3f}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("tenants", nargs="+")
    parser.add_argument("--json")
    parser.add_argument("--svg")
    args = parser.parse_args()
    start_django(own_database=False, migrate=False)
    rows = [row for slug in args.tenants for row in measure(slug)]
    if args.json:
        Path(args.json).write_text(json.dumps({"seeds": SEEDS, "rows": rows}, indent=1))
    if args.svg:
        Path(args.svg).write_text(svg_chart(rows))


if __name__ == "__main__":
    main()
