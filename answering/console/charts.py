"""Server-rendered SVG line charts for the console dashboard (no JavaScript chart library).

Every number drawn is also in the table under the charts; the SVG carries a <title> per point
and role="img" with a label, so a screen reader gets the same figures.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _

WIDTH, HEIGHT = 560, 190
LEFT, RIGHT, TOP, BOTTOM = 58, 14, 26, 30
GRID_LINES = 4


@dataclass(frozen=True)
class Series:
    name: str
    values: Sequence[float | None]
    color: str


def _nice_max(value: float) -> float:
    """A round axis top at or above the largest value (1, 2, 2.5 or 5 times a power of ten)."""
    if value <= 0:
        return 1.0
    magnitude = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if value <= step * magnitude:
            return step * magnitude
    return value


def _n(value: float) -> str:
    return f"{value:.1f}"


def line_chart(*, title: str, days: Sequence[dt.date], series: Sequence[Series],
               y_format: Callable[[float], str], y_max: float | None = None) -> SafeString:
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    values = [v for s in series for v in s.values if v is not None]
    top = y_max if y_max is not None else _nice_max(max(values, default=0.0))
    count = len(days)

    def x(i: int) -> float:
        return LEFT + (plot_w * i / (count - 1) if count > 1 else plot_w / 2)

    def y(v: float) -> float:
        return TOP + plot_h - plot_h * min(v, top) / top

    parts: list[str] = [format_html(
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {} {}" width="100%" role="img" aria-label="{}" '
        'class="ad-chart" style="max-width:{}px;font:11px sans-serif">', WIDTH, HEIGHT, title, WIDTH)]
    parts.append(format_html('<text x="{}" y="16" font-weight="bold" font-size="13">{}</text>', LEFT, title))
    for g in range(GRID_LINES + 1):
        value = top * g / GRID_LINES
        gy = y(value)
        parts.append(format_html('<line x1="{}" x2="{}" y1="{}" y2="{}" stroke="#ddd"/>', LEFT,
                                 WIDTH - RIGHT, _n(gy), _n(gy)))
        parts.append(format_html('<text x="{}" y="{}" text-anchor="end" fill="#555">{}</text>', LEFT - 6,
                                 _n(gy + 4), y_format(value)))
    label_every = max(1, count // 7)
    for i, day in enumerate(days):
        # The last day is always labelled; a regular label too close before it is dropped.
        if i == count - 1 or (i % label_every == 0 and count - 1 - i >= label_every):
            anchor = "end" if i == count - 1 and count > 1 else "middle"  # the last label stays inside
            parts.append(format_html('<text x="{}" y="{}" text-anchor="{}" fill="#555">{}</text>', _n(x(i)),
                                     HEIGHT - 10, anchor, day.strftime("%b %d")))
    for index, s in enumerate(series):
        # A day without data breaks the line instead of pretending to be zero.
        runs: list[list[tuple[float, float]]] = [[]]
        for i, v in enumerate(s.values):
            if v is None:
                runs.append([])
            else:
                runs[-1].append((x(i), y(v)))
        for run in runs:
            if len(run) > 1:
                points = " ".join(f"{px:.1f},{py:.1f}" for px, py in run)
                parts.append(format_html('<polyline fill="none" stroke="{}" stroke-width="2" points="{}"/>',
                                         s.color, points))
        for i, v in enumerate(s.values):
            if v is not None:
                parts.append(format_html(
                    '<circle cx="{}" cy="{}" r="3" fill="{}"><title>{} {}: {}</title></circle>',
                    _n(x(i)), _n(y(v)), s.color, days[i].isoformat(), s.name, y_format(v)))
        if len(series) > 1:
            lx = WIDTH - RIGHT - 110 * (len(series) - index)
            parts.append(format_html('<rect x="{}" y="7" width="10" height="10" fill="{}"/>'
                                     '<text x="{}" y="16">{}</text>', lx, s.color, lx + 14, s.name))
    if not values:
        parts.append(format_html('<text x="{}" y="{}" text-anchor="middle" fill="#888">{}</text>',
                                 LEFT + plot_w / 2, TOP + plot_h / 2, _("no data in this range")))
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 - every interpolated value went through format_html


def percent(value: float) -> str:
    return f"{value * 100:.0f}%"


def ms(value: float) -> str:
    return f"{value:.0f} ms"


def usd(value: float) -> str:
    return f"${value:.5f}" if value < 0.01 else f"${value:.3f}"


def plain(value: float) -> str:
    return f"{value:.2f}"

