"""Reports people read: arms side by side with deltas against hybrid, a recall@k chart drawn
as server-side SVG, and the misses with what was retrieved instead."""

from __future__ import annotations

from typing import Any

from django.template.loader import render_to_string
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

PALETTE = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#4b5563", "#ca8a04", "#db2777", "#65a30d"]


def recall_chart(report: dict[str, Any], *, width: int = 560, height: int = 260) -> SafeString:
    """recall@k (and page recall@k) per arm as lines over k: a picture beats a table of numbers."""
    ks = report["ks"]
    left, bottom, top, right = 48, 36, 16, 150
    plot_w, plot_h = width - left - right, height - top - bottom

    def x(i: int) -> float:
        return left + (plot_w * i / max(1, len(ks) - 1))

    def y(v: float) -> float:
        return top + plot_h * (1 - v)

    parts = [format_html('<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" role="img" '
                         'aria-label="recall at k per arm">', width, height)]
    for tick in (0, 0.25, 0.5, 0.75, 1.0):
        parts.append(format_html('<line x1="{}" x2="{}" y1="{}" y2="{}" stroke="#e5e7eb"/>'
                                 '<text x="{}" y="{}" font-size="11" text-anchor="end">{}</text>',
                                 left, left + plot_w, y(tick), y(tick), left - 6, y(tick) + 4, f"{tick:.2f}"))
    for i, k in enumerate(ks):
        parts.append(format_html('<text x="{}" y="{}" font-size="11" text-anchor="middle">@{}</text>',
                                 x(i), height - 12, k))
    # A skipped arm has no line: drawn at zero it would read as a measured zero.
    drawn = [(arm, data) for arm, data in report["arms"].items() if not data.get("skipped")]
    for n, (arm, data) in enumerate(drawn):
        color = PALETTE[n % len(PALETTE)]
        for key, dash in (("recall", ""), ("page_recall", "4 3")):
            points = " ".join(f"{x(i):.1f},{y(float(data['metrics'].get(f'{key}@{k}') or 0)):.1f}"
                              for i, k in enumerate(ks))
            parts.append(format_html('<polyline fill="none" stroke="{}" stroke-width="2" stroke-dasharray="{}" '
                                     'points="{}"/>', color, dash, points))
        parts.append(format_html('<rect x="{}" y="{}" width="10" height="10" fill="{}"/>'
                                 '<text x="{}" y="{}" font-size="11">{}</text>',
                                 left + plot_w + 12, top + 16 * n, color, left + plot_w + 26, top + 16 * n + 9, arm))
    parts.append(format_html('<text x="{}" y="{}" font-size="10" fill="#6b7280">solid: heading · dashed: page</text>',
                             left + plot_w + 12, top + 16 * len(drawn) + 12))
    parts.append(mark_safe("</svg>"))
    return mark_safe("".join(parts))


def comparison_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    arms = report["arms"]
    base = arms.get("hybrid", next(iter(arms.values())))["metrics"]
    keys = list(dict.fromkeys(k for data in arms.values() for k in data["metrics"]
                              if not k.startswith("stage_") and k != "cases"))
    rows = []
    for key in keys:
        cells = []
        for arm, data in arms.items():
            value, reference = data["metrics"].get(key), base.get(key)
            delta = (value - reference) if isinstance(value, (int, float)) and isinstance(reference, (int, float)) else None
            cells.append({"value": value, "delta": None if arm == "hybrid" else delta})
        rows.append({"metric": key, "cells": cells})
    return rows


INTERVAL_METRICS = ("page_recall@1", "page_recall@5", "page_recall@10", "page_mrr", "must_abstain_recall",
                    "false_abstention", "fact_coverage", "answer_precision", "turn_contamination", "noise_rate")


def _bounded(summary: dict[str, Any] | None) -> str:
    if not summary:
        return "–"
    return f"{summary['value']} [{summary['low']}, {summary['high']}]"


def _facts(versus: dict[str, Any] | None) -> str:
    if not versus or not (versus["wins"] or versus["losses"] or versus["ties"]):
        return ""
    moved = f"+{', '.join(versus['wins']) or '–'} / −{', '.join(versus['losses']) or '–'}"
    return f"{moved}; Δ {_bounded(versus['delta'])}" if versus["delta"]["low"] is not None else moved


def interval_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per arm: each headline metric with its interval, then wins and losses against the first arm."""
    block = report.get("intervals") or {}
    rows = []
    for arm, metrics in block.get("arms", {}).items():
        versus = block.get("against_base", {}).get(arm)
        rows.append({
            "arm": arm, "cells": [_bounded(metrics.get(name)) for name in INTERVAL_METRICS],
            "n": (metrics.get("page_recall@5") or {}).get("n"),
            "wins": ", ".join(versus["wins"]) if versus else "", "losses": ", ".join(versus["losses"]) if versus else "",
            "delta": _bounded(versus["delta"]) if versus and versus["delta"]["low"] is not None else "",
            "facts": _facts(versus.get("facts") if versus else None),
        })
    return rows


def render_html(report: dict[str, Any]) -> str:
    misses = []
    for arm, data in report["arms"].items():
        for case in data["cases"]:
            rank = case.get("page_hit_rank")
            if case.get("expected") and (rank is None or rank > 5):
                misses.append({"arm": arm, **case})
    return render_to_string("evaluation/report.html", {
        "report": report, "chart": recall_chart(report), "rows": comparison_rows(report),
        "arms": list(report["arms"]), "misses": misses,
        "intervals": report.get("intervals"), "interval_rows": interval_rows(report),
        "interval_metrics": INTERVAL_METRICS,
        "confidence_pct": round(100 * (report.get("intervals") or {}).get("confidence", 0.95)),
    })
