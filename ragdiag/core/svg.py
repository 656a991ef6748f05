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
from ..core.words import interval, pct

__all__ = ["PALETTE", "IntervalSeries", "Line", "Step", "Dot", "interval_chart", "line_chart", "waterfall_chart",
           "dot_chart", "LOSS", "MUTED"]

PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
DASHES = ("", "6 3", "2 3", "8 3 2 3")
_FONT = "font-family=\"system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif\""
_AXIS = "#6b7280"
_GRID = "#e5e7eb"
#: Red means loss (destroyed, refused, bluffs); grey is everything not compared.
LOSS = "#C62828"
MUTED = "#9ca3af"


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
            tip = f"{s.name} {cat}: {interval(float(est), float(lo), float(hi))}"
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
               y_max: float = 1.0, y_format=pct, marker: float | None = None,
               marker_label: str = "", width: int = 720, height: int = 320, goal: float | None = None,
               goal_label: str = "", second_marker: float | None = None, second_label: str = "") -> str:
    """Lines over a numeric x axis, with an optional vertical marker (e.g. the chosen cut).

    ``goal`` draws a horizontal red rule at that y (e.g. the bluff rate a team accepts), labelled
    ``goal_label``; ``second_marker`` a second, dotted vertical line (e.g. a proposed cut beside the chosen one).

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
    if goal is not None and 0 <= goal <= y_max:
        gy = py(float(goal))
        out.append(f'<line x1="{_n(left)}" y1="{_n(gy)}" x2="{_n(right)}" y2="{_n(gy)}" stroke="{LOSS}" '
                   f'stroke-width="1.4" stroke-dasharray="7 4"><title>{_e(goal_label)}</title></line>')
        out.append(f'<text x="{_n(right - 4)}" y="{_n(gy - 5)}" text-anchor="end" fill="{LOSS}" '
                   f'font-weight="600">{_e(goal_label)}</text>')
    for value, text, row, dash in ((marker, marker_label, 0, "3 3"), (second_marker, second_label, 1, "1 3")):
        if value is None or not x0 <= value <= x1:
            continue
        mx = px(float(value))
        ty = top - 8 - 14 * row
        out.append(f'<line x1="{_n(mx)}" y1="{_n(ty - 8)}" x2="{_n(mx)}" y2="{_n(bottom)}" stroke="#111827" '
                   f'stroke-width="1.2" stroke-dasharray="{dash}"/>')
        anchor = "end" if mx > (left + right) / 2 else "start"
        dx = -6 if anchor == "end" else 6
        out.append(f'<text x="{_n(mx + dx)}" y="{_n(ty)}" text-anchor="{anchor}" fill="#111827" '
                   f'font-weight="600">{_e(text)}</text>')
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



@dataclass(frozen=True)
class Step:
    """One bar of a :func:`waterfall_chart`: ``count`` items lost at this step (or the total, for an end bar)."""

    name: str
    count: int
    total: bool = False  # an end bar (drawn from zero in the accent colour), not a loss


#: A width per character of the charts' 12 px sans-serif that its letters do not exceed on average.
CHAR_PX = 7.0


def waterfall_chart(steps: Sequence[Step], *, label: str, of: int, width: int = 540, row: int = 30,
                    label_width: int = 200) -> str:
    """A horizontal waterfall: where ``of`` items go, one loss per row, floating where the last row ended.

    Total rows (``Step(total=True)``) are drawn from zero in the accent colour; losses in red, each
    with its count and share of ``of``. The row labels get ``label_width`` px, or more when the longest
    needs it (the bars keep at least 200 px).

    >>> s = waterfall_chart([Step("in", 10, True), Step("lost", 3), Step("kept", 7, True)], label="flow", of=10)
    >>> s.count("<rect"), ">-3 (30%)<" in s
    (3, True)
    """
    if of < 1:
        raise ValueError("waterfall_chart needs a positive total")
    longest = max((len(st.name) for st in steps), default=0) * CHAR_PX + 12  # the text and its gap to the bar
    left, right, top = float(min(max(label_width, longest), width - 86.0 - 200)), width - 86.0, 14.0
    height = int(top + row * len(steps) + 28)
    px = lambda v: left + (right - left) * v / of  # noqa: E731
    out = _open(width, height, label)
    level = of
    for i, st in enumerate(steps):
        y = top + row * i
        if st.total:
            a, b, color, text = 0, st.count, PALETTE[0], f"{st.count} ({pct(st.count, of=of)})"
            level = st.count
        else:
            a, b, color = level - st.count, level, LOSS
            text = f"-{st.count} ({pct(st.count, of=of)})" if st.count else "0"
            level -= st.count
        w = max(px(b) - px(a), 1.5 if st.count else 0.0)
        out.append(f"<g><title>{_e(st.name)}: {_e(text)}</title>")
        out.append(f'<text x="{_n(left - 8)}" y="{_n(y + row / 2 + 4)}" text-anchor="end" fill="#111827">'
                   f"{_e(st.name)}</text>")
        out.append(f'<rect x="{_n(px(a))}" y="{_n(y + 5)}" width="{_n(w)}" height="{_n(row - 10)}" fill="{color}" '
                   f'rx="2"/>')
        out.append(f'<text x="{_n(px(b) + 6)}" y="{_n(y + row / 2 + 4)}" fill="{_AXIS if not st.count else color}" '
                   f'font-weight="600">{_e(text)}</text>')
        out.append("</g>")
        if i + 1 < len(steps):  # the connector: where the next bar starts
            out.append(f'<line x1="{_n(px(level))}" y1="{_n(y + row - 5)}" x2="{_n(px(level))}" '
                       f'y2="{_n(y + row + 5)}" stroke="{_AXIS}" stroke-dasharray="2 2"/>')
    base = top + row * len(steps)
    out.append(f'<line x1="{_n(left)}" y1="{_n(base)}" x2="{_n(right)}" y2="{_n(base)}" stroke="{_AXIS}"/>')
    for t in (0, 0.25, 0.5, 0.75, 1.0):
        out.append(f'<text x="{_n(px(t * of))}" y="{_n(base + 15)}" text-anchor="middle" fill="{_AXIS}">'
                   f"{pct(t)}</text>")
    out.append("</svg>")
    return "\n".join(out)


@dataclass(frozen=True)
class Dot:
    """One row of a :func:`dot_chart`: an estimate with its interval; ``tier`` 0 accent, 1 dark, 2 grey."""

    name: str
    estimate: float
    low: float
    high: float
    tier: int = 2
    note: str = ""  # grey text on the second line (e.g. the configuration's code)
    sub: str = ""  # a second line of the label, before the note


def dot_chart(dots: Sequence[Dot], *, label: str, x_min: float, x_max: float, x_format=lambda t: f"{t:g}",
              reference: float | None = None, x_label: str = "", width: int = 540, row: int = 26,
              label_width: int = 250) -> str:
    """A dot plot with interval rules, one row per item, in the order given (sort before calling).

    >>> s = dot_chart([Dot("a", 0.5, 0.3, 0.7, 0), Dot("b", 0.2, 0.1, 0.4)], label="rank", x_min=0, x_max=1)
    >>> s.count("<circle"), "a" in s
    (2, True)
    """
    if not x_max > x_min:
        raise ValueError("dot_chart needs x_max > x_min")
    left, right, top = float(label_width), width - 14.0, 8.0
    height = int(top + row * len(dots) + (40 if x_label else 24))
    px = lambda v: left + (right - left) * (min(max(float(v), x_min), x_max) - x_min) / (x_max - x_min)  # noqa: E731
    colors = (PALETTE[0], "#1f2937", MUTED)
    out = _open(width, height, label)
    base = top + row * len(dots)
    step = _nice_step((x_max - x_min) / 5)
    t = math.ceil(x_min / step) * step
    while t <= x_max + 1e-9:
        out.append(f'<line x1="{_n(px(t))}" y1="{_n(top)}" x2="{_n(px(t))}" y2="{_n(base)}" stroke="{_GRID}"/>')
        out.append(f'<text x="{_n(px(t))}" y="{_n(base + 15)}" text-anchor="middle" fill="{_AXIS}">'
                   f"{_e(x_format(round(t, 10)))}</text>")
        t = round(t + step, 10)
    if reference is not None and x_min <= reference <= x_max:
        out.append(f'<line x1="{_n(px(reference))}" y1="{_n(top)}" x2="{_n(px(reference))}" y2="{_n(base)}" '
                   f'stroke="{_AXIS}" stroke-width="1.2"/>')
    for i, d in enumerate(dots):
        y = top + row * i + row / 2
        color = colors[min(max(d.tier, 0), 2)]
        weight = ' font-weight="600"' if d.tier == 0 else ""
        tip = f"{d.name} {d.sub} {d.note}: {x_format(d.estimate)} [{x_format(d.low)}, {x_format(d.high)}]"
        out.append(f"<g><title>{_e(tip)}</title>")
        if d.sub or d.note:  # two lines: the name, then the sub-label and the grey note
            note = f'<tspan fill="{_AXIS}"> {_e(d.note)}</tspan>' if d.note else ""
            out.append(f'<text x="{_n(left - 10)}" y="{_n(y - 2)}" text-anchor="end" fill="#111827"{weight}>'
                       f"{_e(d.name)}</text>")
            out.append(f'<text x="{_n(left - 10)}" y="{_n(y + 11)}" text-anchor="end" fill="#374151" '
                       f'font-size="11">{_e(d.sub)}{note}</text>')
        else:
            out.append(f'<text x="{_n(left - 10)}" y="{_n(y + 4)}" text-anchor="end" fill="#111827"{weight}>'
                       f"{_e(d.name)}</text>")
        if _ok(d.estimate):
            out.append(f'<line x1="{_n(px(d.low))}" y1="{_n(y)}" x2="{_n(px(d.high))}" y2="{_n(y)}" '
                       f'stroke="{color}" stroke-width="2.2"/>')
            out.append(f'<circle cx="{_n(px(d.estimate))}" cy="{_n(y)}" r="5" fill="{color}" stroke="#fff" '
                       f'stroke-width="1.5"/>')
        out.append("</g>")
    out.append(f'<line x1="{_n(left)}" y1="{_n(base)}" x2="{_n(right)}" y2="{_n(base)}" stroke="{_AXIS}"/>')
    if x_label:  # under the plot's middle, moved left as far as it must to end inside the chart
        mid = min((left + right) / 2, width - 4 - len(x_label) * CHAR_PX / 2)
        out.append(f'<text x="{_n(mid)}" y="{height - 6}" text-anchor="middle" fill="{_AXIS}">'
                   f"{_e(x_label)}</text>")
    out.append("</svg>")
    return "\n".join(out)
