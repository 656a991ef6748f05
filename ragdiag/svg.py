"""Tiny dependency-free SVG charts for self-contained reports.

Each builder returns one ``<svg>`` element as a string, to be inlined in an
HTML page: no scripts, no external fonts or stylesheets, no links. Every piece
of text (titles, legend names, labels) is HTML-escaped here, so a series named
``<script>`` shows those characters. The element carries no ``xmlns``: inline
SVG in HTML5 needs none.

Colours are the Okabe-Ito palette, readable with the common colour-vision
deficiencies; lines also differ by dash pattern, so the charts survive a
grey-scale printer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape
from typing import Sequence

__all__ = ["PALETTE", "IntervalSeries", "Line", "interval_chart", "line_chart"]

PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
DASHES = ("", "6 3", "2 3", "8 3 2 3")
_FONT = "font-family=\"system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif\""
_AXIS = "#6b7280"
_GRID = "#e5e7eb"


@dataclass(frozen=True)
class IntervalSeries:
    """One series of point estimates with interval bounds, one value per category."""

    name: str
    estimates: Sequence[float]
    lows: Sequence[float]
    highs: Sequence[float]


@dataclass(frozen=True)
class Line:
    """One line of a :func:`line_chart`: ``values[i]`` at ``x[i]``."""

    name: str
    values: Sequence[float]


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def _n(x: float) -> str:
    return f"{x:.1f}"


def _ok(x: float) -> bool:
    return x is not None and not math.isnan(float(x))


def _open(width: int, height: int, label: str) -> list[str]:
    return [
        f'<svg viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-label="{_e(label)}" style="max-width:100%;height:auto" {_FONT} font-size="12">',
        f"<title>{_e(label)}</title>",
    ]


def _legend(names: Sequence[str], x: float, y: float, *, dashed: bool = False) -> list[str]:
    out, cx = [], x
    for i, name in enumerate(names):
        color = PALETTE[i % len(PALETTE)]
        dash = DASHES[i % len(DASHES)] if dashed else ""
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(f'<line x1="{_n(cx)}" y1="{_n(y)}" x2="{_n(cx + 18)}" y2="{_n(y)}" stroke="{color}" '
                   f'stroke-width="2.5"{dash_attr}/>')
        out.append(f'<text x="{_n(cx + 23)}" y="{_n(y + 4)}" fill="#111827">{_e(name)}</text>')
        cx += 23 + 7.0 * len(str(name)) + 22
    return out


def _y_axis(left: float, right: float, top: float, bottom: float, ticks: Sequence[float], y_max: float,
            fmt) -> list[str]:
    out = []
    for t in ticks:
        y = bottom - (bottom - top) * t / y_max
        out.append(f'<line x1="{_n(left)}" y1="{_n(y)}" x2="{_n(right)}" y2="{_n(y)}" stroke="{_GRID}"/>')
        out.append(f'<text x="{_n(left - 6)}" y="{_n(y + 4)}" text-anchor="end" fill="{_AXIS}">{_e(fmt(t))}</text>')
    out.append(f'<line x1="{_n(left)}" y1="{_n(bottom)}" x2="{_n(right)}" y2="{_n(bottom)}" stroke="{_AXIS}"/>')
    return out


def interval_chart(categories: Sequence[str], series: Sequence[IntervalSeries], *, label: str,
                   y_label: str = "", width: int = 640, height: int = 300) -> str:
    """Points with interval bars, grouped by category (e.g. R@1, R@4, ... per configuration).

    The y axis runs from 0 to 1 (proportions). A NaN estimate draws nothing.

    >>> s = interval_chart(["R@1", "R@4"], [IntervalSeries("E/<b>", [0.5, 0.75], [0.3, 0.5], [0.7, 0.9])],
    ...                    label="recall")
    >>> s.startswith("<svg") and s.endswith("</svg>") and "E/&lt;b&gt;" in s and "<b>" not in s
    True
    """
    if not categories:
        raise ValueError("interval_chart needs at least one category")
    for s in series:
        if not len(s.estimates) == len(s.lows) == len(s.highs) == len(categories):
            raise ValueError(f"series {s.name!r}: need one estimate, low and high per category")
    left, right, top, bottom = 52.0, width - 16.0, 40.0, height - 38.0
    out = _open(width, height, label)
    out += _y_axis(left, right, top, bottom, [0, 0.25, 0.5, 0.75, 1.0], 1.0, lambda t: f"{t:.2f}")
    if y_label:
        out.append(f'<text x="14" y="{_n((top + bottom) / 2)}" fill="{_AXIS}" text-anchor="middle" '
                   f'transform="rotate(-90 14 {_n((top + bottom) / 2)})">{_e(y_label)}</text>')
    band = (right - left) / len(categories)
    n = max(len(series), 1)
    spread = min(band * 0.6, 26.0 * n)
    for ci, cat in enumerate(categories):
        cx = left + band * (ci + 0.5)
        out.append(f'<text x="{_n(cx)}" y="{_n(bottom + 18)}" text-anchor="middle" fill="#111827">{_e(cat)}</text>')
        for si, s in enumerate(series):
            color = PALETTE[si % len(PALETTE)]
            x = cx + (spread * ((si + 0.5) / n - 0.5) if n > 1 else 0.0)
            est, lo, hi = s.estimates[ci], s.lows[ci], s.highs[ci]
            if not _ok(est):
                continue
            ylo = bottom - (bottom - top) * float(lo)
            yhi = bottom - (bottom - top) * float(hi)
            ye = bottom - (bottom - top) * float(est)
            tip = f"{s.name} {cat}: {float(est):.3f} [{float(lo):.3f}, {float(hi):.3f}]"
            out.append(f"<g><title>{_e(tip)}</title>")
            out.append(f'<line x1="{_n(x)}" y1="{_n(ylo)}" x2="{_n(x)}" y2="{_n(yhi)}" stroke="{color}" '
                       f'stroke-width="2"/>')
            for yc in (ylo, yhi):
                out.append(f'<line x1="{_n(x - 5)}" y1="{_n(yc)}" x2="{_n(x + 5)}" y2="{_n(yc)}" '
                           f'stroke="{color}" stroke-width="2"/>')
            out.append(f'<circle cx="{_n(x)}" cy="{_n(ye)}" r="4.5" fill="{color}" stroke="#fff" stroke-width="1.5"/>')
            out.append("</g>")
    out += _legend([s.name for s in series], left, 18)
    out.append("</svg>")
    return "\n".join(out)


def line_chart(x: Sequence[float], lines: Sequence[Line], *, label: str, x_label: str = "", y_label: str = "",
               y_max: float = 1.0, y_format=lambda t: f"{100 * t:.0f}%", marker: float | None = None,
               marker_label: str = "", width: int = 720, height: int = 320) -> str:
    """Lines over a numeric x axis, with an optional vertical marker (e.g. the chosen cut).

    >>> s = line_chart([0.0, 0.5, 1.0], [Line("answered", [0.0, 0.5, 1.0])], label="sweep", marker=0.5,
    ...                marker_label="cut 0.5")
    >>> s.count("<polyline"), "cut 0.5" in s
    (1, True)
    """
    xs = [float(v) for v in x]
    if len(xs) < 2:
        raise ValueError("line_chart needs at least two x values")
    for ln in lines:
        if len(ln.values) != len(xs):
            raise ValueError(f"line {ln.name!r}: need one value per x ({len(xs)}), got {len(ln.values)}")
    x0, x1 = min(xs), max(xs)
    if x1 <= x0:
        raise ValueError("line_chart needs an x range of positive width")
    left, right, top, bottom = 52.0, width - 16.0, 58.0, height - 44.0
    px = lambda v: left + (right - left) * (v - x0) / (x1 - x0)  # noqa: E731
    py = lambda v: bottom - (bottom - top) * v / y_max  # noqa: E731
    out = _open(width, height, label)
    out += _y_axis(left, right, top, bottom, [y_max * t for t in (0, 0.25, 0.5, 0.75, 1.0)], y_max, y_format)
    step = _nice_step((x1 - x0) / 8)
    t = math.ceil(x0 / step) * step
    while t <= x1 + 1e-9:
        out.append(f'<line x1="{_n(px(t))}" y1="{_n(bottom)}" x2="{_n(px(t))}" y2="{_n(bottom + 4)}" '
                   f'stroke="{_AXIS}"/>')
        out.append(f'<text x="{_n(px(t))}" y="{_n(bottom + 17)}" text-anchor="middle" fill="{_AXIS}">{t:g}</text>')
        t = round(t + step, 10)
    if x_label:
        out.append(f'<text x="{_n((left + right) / 2)}" y="{height - 6}" text-anchor="middle" '
                   f'fill="{_AXIS}">{_e(x_label)}</text>')
    if y_label:
        out.append(f'<text x="14" y="{_n((top + bottom) / 2)}" fill="{_AXIS}" text-anchor="middle" '
                   f'transform="rotate(-90 14 {_n((top + bottom) / 2)})">{_e(y_label)}</text>')
    for i, ln in enumerate(lines):
        color, dash = PALETTE[i % len(PALETTE)], DASHES[i % len(DASHES)]
        pts = " ".join(f"{_n(px(a))},{_n(py(float(b)))}" for a, b in zip(xs, ln.values) if _ok(b))
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(f'<polyline points="{pts}" fill="none" stroke="{color}" stroke-width="2.2" '
                   f'stroke-linejoin="round"{dash_attr}><title>{_e(ln.name)}</title></polyline>')
    if marker is not None and x0 <= marker <= x1:
        mx = px(float(marker))
        out.append(f'<line x1="{_n(mx)}" y1="{_n(top - 16)}" x2="{_n(mx)}" y2="{_n(bottom)}" stroke="#111827" '
                   f'stroke-width="1.2" stroke-dasharray="3 3"/>')
        anchor = "end" if mx > (left + right) / 2 else "start"
        dx = -6 if anchor == "end" else 6
        out.append(f'<text x="{_n(mx + dx)}" y="{_n(top - 8)}" text-anchor="{anchor}" fill="#111827" '
                   f'font-weight="600">{_e(marker_label)}</text>')
    out += _legend([ln.name for ln in lines], left, 18, dashed=True)
    out.append("</svg>")
    return "\n".join(out)


def _nice_step(raw: float) -> float:
    """1, 2 or 5 times a power of ten, at least ``raw``."""
    if raw <= 0:
        return 1.0
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if m * mag >= raw - 1e-12:
            return m * mag
    return 10 * mag

