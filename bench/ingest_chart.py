"""Where the manual's ingest goes, as a chart: docs/img/ingest-stages.svg.

    .venv/bin/python bench/ingest_chart.py [bench/results/ingest-vs-peer.json]

Reads the stored `make bench-peer` result and draws, on one axis of seconds: Answerdesk's
ingest (the main thread's stages, then the writer thread's, which run beside the encoder), the
bare encode of the same texts, and the LlamaIndex peer by its stages; the two goals (0.4 of the
peer, 1.15 of the bare encode) are lines. Nothing is measured here.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MAIN_THREAD = ("parse", "chunk", "tokenize", "encode", "pool", "pack states")
WRITER_THREAD = ("keys", "write rows", "statistics")
COLOURS = {"parse": "#c9b458", "chunk": "#e0a458", "tokenize": "#9fc5e8", "encode": "#2f6fb0",
           "pool": "#76a5d8", "pack states": "#8e7cc3", "other": "#d0d0d0", "keys": "#93c47d",
           "write rows": "#6aa84f", "statistics": "#38761d", "read": "#c9b458", "split": "#e0a458",
           "embed": "#cc4125", "insert": "#6aa84f"}


def rows(result: dict[str, Any]) -> list[tuple[str, float, list[tuple[str, float]]]]:
    """(label, total seconds, [(stage, seconds)]) per bar; `other` is the main thread's rest."""
    ours = result["answerdesk"]
    stages = ours["stage_seconds"]
    main = [(name, float(stages.get(name, 0.0))) for name in MAIN_THREAD]
    main.append(("other", max(0.0, ours["seconds"] - sum(s for _, s in main))))
    writer = [(name, float(stages.get(name, 0.0))) for name in WRITER_THREAD]
    peer = result["peer"]
    return [
        ("Answerdesk ingest, main thread", ours["seconds"], main),
        ("  writer thread (beside it)", sum(s for _, s in writer), writer),
        ("bare int8 encode, same texts", result["bare_encode"]["seconds"],
         [("encode", result["bare_encode"]["seconds"])]),
        ("LlamaIndex peer", peer["seconds"], [(k, float(v)) for k, v in peer["stage_seconds"].items()]),
    ]


def svg(result: dict[str, Any]) -> str:
    bars = rows(result)
    width, left, top, bar_h, gap = 860, 210, 64, 26, 14
    longest = max(total for _, total, _ in bars)
    scale = (width - left - 60) / longest
    height = top + len(bars) * (bar_h + gap) + 70
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
             'font-size="11" role="img" aria-label="Where the manual\'s ingest goes">',
             f'<text x="{left}" y="18" font-size="13">The PostgreSQL manual: ingest by stage, bare encode, '
             f'peer (seconds, one run, {result["started_utc"][:10]})</text>']
    for tick in range(0, int(longest) + 1, 50):
        x = left + tick * scale
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top - 6}" y2="{height - 56}" stroke="#eee"/>'
                     f'<text x="{x:.1f}" y="{height - 44}" text-anchor="middle">{tick}</text>')
    for i, (label, total, stages) in enumerate(bars):
        y = top + i * (bar_h + gap)
        parts.append(f'<text x="{left - 8}" y="{y + bar_h / 2 + 4:.1f}" text-anchor="end">{label}</text>')
        x = float(left)
        for name, seconds in stages:
            w = seconds * scale
            parts.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{bar_h}" fill="{COLOURS[name]}">'
                         f'<title>{name}: {seconds:.1f} s</title></rect>')
            if w > 34:
                parts.append(f'<text x="{x + w / 2:.1f}" y="{y + bar_h / 2 + 4:.1f}" text-anchor="middle" '
                             f'fill="#fff">{name}</text>')
            x += w
        parts.append(f'<text x="{x + 4:.1f}" y="{y + bar_h / 2 + 4:.1f}">{total:.0f} s</text>')
    goals = [(result["peer"]["seconds"] * 0.4, "0.4 × peer"),
             (result["bare_encode"]["seconds"] * 1.15, "1.15 × bare encode")]
    for i, (seconds, name) in enumerate(sorted(goals)):
        x = left + seconds * scale
        label_y = top - 30 + 14 * i  # staggered: the two goals can be a few seconds apart
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{label_y + 3}" y2="{height - 56}" stroke="#c00" '
                     f'stroke-dasharray="4 3"/><text x="{x + 3:.1f}" y="{label_y}" fill="#c00">{name} '
                     f'({seconds:.0f} s)</text>')
    legend = ("parse", "chunk", "tokenize", "encode", "pack states", "write rows", "statistics", "embed", "other")
    x = float(left)
    for name in legend:
        parts.append(f'<rect x="{x:.0f}" y="{height - 24}" width="10" height="10" fill="{COLOURS[name]}"/>'
                     f'<text x="{x + 14:.0f}" y="{height - 15}">{name}</text>')
        x += 24 + 6.2 * len(name)
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main() -> None:
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "bench" / "results" / "ingest-vs-peer.json"
    out = ROOT / "docs" / "img" / "ingest-stages.svg"
    out.write_text(svg(json.loads(source.read_text())))
    print(out)


if __name__ == "__main__":
    main()
