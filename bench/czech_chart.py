"""The two Czech sets before and after issue 49, as a chart: docs/img/czech-sets.svg.

    .venv/bin/python bench/czech_chart.py

Reads the stored reports (keywords alone: eval-demo-tlapka-0111.json and
eval-gnomehelp-cs-keyword-0112.json; the issue's end: the -0115 reports) and draws, per set, page
recall@5, must-abstain recall and the share of answerable questions answered (1 - false
abstention), each with its 95% bootstrap interval. Nothing is measured here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
SETS = [("demo-tlapka", "eval-demo-tlapka-0111.json", "eval-demo-tlapka-0115.json"),
        ("gnomehelp-cs", "eval-gnomehelp-cs-keyword-0112.json", "eval-gnomehelp-cs-0115.json")]
METRICS = [("page_recall@5", "page recall@5", False), ("must_abstain_recall", "must-abstain recall", False),
           ("false_abstention", "answerable answered", True)]
COLOURS = {"keywords alone": "#9aa5b1", "multilingual-e5 (issue 49)": "#2f6fb0"}


def interval(report: dict[str, Any], metric: str, flip: bool) -> tuple[float, float, float]:
    cell = report["intervals"]["arms"]["hybrid"][metric]
    value, low, high = cell["value"], cell["low"], cell["high"]
    return (1 - value, 1 - high, 1 - low) if flip else (value, low, high)


def svg() -> str:
    width, height, left, top, plot_h = 760, 330, 60, 40, 220
    group_w = (width - left - 20) / (len(SETS) * len(METRICS))
    bar_w = group_w / 3
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
             'font-size="11" role="img" aria-label="The Czech sets before and after issue 49">',
             '<text x="60" y="20" font-size="13">Czech sets: keywords alone against multilingual-e5 '
             '(95% bootstrap intervals)</text>']
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = top + plot_h * (1 - tick)
        parts.append(f'<line x1="{left}" x2="{width - 20}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e3e3e3"/>'
                     f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">{tick:.2f}</text>')
    slot = 0
    for name, before_file, after_file in SETS:
        reports = [json.loads((RESULTS / f).read_text()) for f in (before_file, after_file)]
        for metric, label, flip in METRICS:
            x0 = left + slot * group_w + bar_w / 2
            for i, (report, arm) in enumerate(zip(reports, COLOURS)):
                value, low, high = interval(report, metric, flip)
                x = x0 + i * bar_w
                y = top + plot_h * (1 - value)
                parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar_w - 2:.1f}" '
                             f'height="{plot_h * value:.1f}" fill="{COLOURS[arm]}"><title>{name} {label}, {arm}: '
                             f'{value:.3f} [{low:.2f}, {high:.2f}]</title></rect>')
                mid = x + (bar_w - 2) / 2
                parts.append(f'<line x1="{mid:.1f}" x2="{mid:.1f}" y1="{top + plot_h * (1 - high):.1f}" '
                             f'y2="{top + plot_h * (1 - low):.1f}" stroke="#222"/>')
            parts.append(f'<text x="{x0 + bar_w:.1f}" y="{top + plot_h + 14}" text-anchor="middle">{label}</text>')
            slot += 1
        centre = left + (slot - len(METRICS) / 2) * group_w
        parts.append(f'<text x="{centre:.1f}" y="{top + plot_h + 30}" text-anchor="middle" '
                     f'font-weight="bold">{name}</text>')
    for i, (arm, colour) in enumerate(COLOURS.items()):
        parts.append(f'<rect x="{left + i * 230}" y="{height - 22}" width="12" height="12" fill="{colour}"/>'
                     f'<text x="{left + 18 + i * 230}" y="{height - 12}">{arm}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main() -> None:
    out = ROOT / "docs" / "img" / "czech-sets.svg"
    out.write_text(svg())
    print(out)


if __name__ == "__main__":
    main()
