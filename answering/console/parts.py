"""Readable fragments of traces and escalations for the console (no JSON dumps).

Each function renders one partial of templates/admin/answering/parts.html.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe

from answering.models import Escalation, Trace

PARTS = "admin/answering/parts.html"
STAGE_ORDER = ("rewrite", "cache", "retrieve", "generate", "citations")
BAR_WIDTH = 240


def _render(partial: str, context: Mapping[str, Any]) -> SafeString:
    return mark_safe(render_to_string(f"{PARTS}#{partial}", dict(context)))  # noqa: S308 - autoescaped template


def history_html(*, question: str, history: Sequence[Mapping[str, str]]) -> SafeString:
    return _render("history", {"question": question, "history": list(history or [])})


def candidates_html(*, candidates: Sequence[Mapping[str, Any]]) -> SafeString:
    return _render("candidates", {"candidates": list(candidates or [])})


def gate_html(*, trace: Trace) -> SafeString:
    return _render("gate", {"gate": trace.gate or {}, "query_coverage": (trace.retrieval or {}).get("query_coverage")})


def stage_rows(stage_ms: Mapping[str, Any]) -> tuple[list[dict[str, Any]], float]:
    names = [s for s in STAGE_ORDER if s in stage_ms] + sorted(set(stage_ms) - set(STAGE_ORDER))
    total = sum(float(stage_ms[n]) for n in names)
    rows = [{"name": n, "ms": float(stage_ms[n]),
             "width": round(BAR_WIDTH * float(stage_ms[n]) / total) if total else 0} for n in names]
    return rows, total


def stages_html(*, trace: Trace) -> SafeString:
    rows, total = stage_rows(trace.stage_ms or {})
    # Retrieval times its own legs; shown under "retrieve" so a slow leg is visible.
    legs = (trace.retrieval or {}).get("timings_ms") or {}
    rows += [{"name": f"  retrieve › {name}", "ms": float(value),
              "width": round(BAR_WIDTH * float(value) / total) if total else 0} for name, value in legs.items()]
    return _render("stages", {"stages": rows, "total_ms": total})


def total_latency_ms(trace: Trace) -> float:
    return stage_rows(trace.stage_ms or {})[1]


def cost_html(*, trace: Trace) -> SafeString:
    return _render("cost", {"trace": trace, "cache": (trace.details or {}).get("cache") or {}})


def citations_html(*, trace: Trace) -> SafeString:
    return _render("citations", {"citations": list(trace.citations or [])})


def escalation_candidates_html(*, escalation: Escalation) -> SafeString:
    return candidates_html(candidates=escalation.candidates or [])
