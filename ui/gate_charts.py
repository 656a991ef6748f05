"""The Threshold page's two charts, as pure builders: the mirrored histogram and the trade-off.

Both trim x to the data, keep titles and legends outside a plot area of at
least 240 px, and use red only for what goes wrong (off-topic queries that get
sources).
"""

from __future__ import annotations

from dataclasses import dataclass

import altair as alt
import numpy as np
import pandas as pd

from ragdiag.core.gate import under_each

from ui.fmt import NEUTRAL
from ragdiag.core.words import cut_text, pct

__all__ = ["PLOT_HEIGHT", "FIT_X", "HISTOGRAM_CUT", "COUNTS_RIGHT", "COUNTS_LEFT", "CURVE_MARKS", "MARKS_LEFT",
           "MARKS_RIGHT", "x_extent", "mirrored_bins", "HistogramLayout", "histogram_layout", "gate_values", "histogram_title",
           "histogram_cut_rows", "histogram_frame", "mirrored_histogram", "tradeoff_wide", "flips", "label_layout",
           "tradeoff_marks", "tradeoff_frame", "tradeoff_curve"]

PLOT_HEIGHT = 260
#: The width fits the column; the height is the plot's own, titles, axes and legends come on top of it.
FIT_X = alt.AutoSizeParams(type="fit-x", contains="padding")
ANSWERABLE, NEAR, FAR = "answerable", "off-topic, near", "off-topic, far"
SERIES_COLORS = {ANSWERABLE: "#546e7a", NEAR: "#c62828", FAR: "#ef9a9a"}
MARKER_COLORS = {"default": "#757575", "in sample": "#90a4ae", "fitted here": "#90a4ae", "proposed": "#1565c0", "conformal": "#6a1b9a",
                 "on screen": "#00897b", "you run today": "#ef6c00",
                 "cost goal": "#5d4037"}  # legible on light and dark


def x_extent(values, *extra: float, pad: float = 0.02) -> tuple[float, float]:
    """The x range a chart of these distances needs: the data and ``extra`` marks, padded, within [0, 1]."""
    v = np.asarray([x for x in [*np.asarray(values, dtype=float).ravel(), *extra] if np.isfinite(x)])
    if v.size == 0:
        return 0.0, 1.0
    lo, hi = float(v.min()) - pad, float(v.max()) + pad
    return round(max(0.0, lo), 3), round(min(1.0, hi), 3)


def mirrored_bins(frame: pd.DataFrame, *, step: float = 0.02) -> pd.DataFrame:
    """Histogram bins of the gate's values (``frames.distance_frame``): answerable counts above zero, off-topic
    below, near stacked first then far. Columns: series, start, end, count, y0, y1 (the bar's extent)."""
    parts = []
    below = {}  # bin -> how far down the off-topic bars of that bin already reach
    keys = {"answer": ANSWERABLE, "near": NEAR, "far": FAR, "ood": NEAR}
    for key, name in keys.items():
        d = frame.loc[frame["key"] == key, "distance"].to_numpy(dtype=float)
        d = d[np.isfinite(d)]
        if d.size == 0:
            continue
        counts = pd.Series(np.floor(d / step).astype(int)).value_counts().sort_index()
        if name == ANSWERABLE:
            y0, y1 = np.zeros(len(counts)), counts.to_numpy()
        else:
            y0 = np.array([below.get(b, 0) for b in counts.index], dtype=float)
            y1 = y0 - counts.to_numpy()
            below.update(dict(zip(counts.index, y1)))
        parts.append(pd.DataFrame({"series": name, "start": counts.index * step, "end": (counts.index + 1) * step,
                                   "count": counts.to_numpy(), "y0": y0, "y1": y1}))
    cols = ["series", "start", "end", "count", "y0", "y1"]
    return pd.concat(parts, ignore_index=True)[cols] if parts else pd.DataFrame(columns=cols)


#: The named data sets that hold the cut (nothing else in either chart depends on it): a page that draws a chart
#: at one cut after another sends the same spec with new rows for these, and the browser redraws the chart in
#: place instead of building a new one (:mod:`ui.threshold_charts`).
HISTOGRAM_CUT, COUNTS_RIGHT, COUNTS_LEFT = "threshold_cut", "threshold_counts_right", "threshold_counts_left"
CURVE_MARKS, MARKS_LEFT, MARKS_RIGHT = "threshold_marks", "threshold_marks_left", "threshold_marks_right"


@dataclass(frozen=True)
class HistogramLayout:
    """What the mirrored histogram's frame is drawn in at a cut: the x range, the y rows of the counts beside the
    cut and of the markers' labels, the markers shown, and the subtitle's count of queries never answered."""

    lo: float
    hi: float
    y_top: float
    y_bottom: float
    y_ceiling: float
    markers: tuple[tuple[str, float], ...]
    missing: int


def histogram_layout(frame: pd.DataFrame, *, cut: float, step: float = 0.02,
                     markers: dict[str, float | None] | None = None,
                     bins: pd.DataFrame | None = None) -> HistogramLayout:
    """The histogram's :class:`HistogramLayout` at ``cut``; it changes with the cut only when the cut leaves the
    range of the distances and markers. ``bins``: ``mirrored_bins(frame, step=step)`` when already at hand."""
    shown = tuple((n, float(c)) for n, c in (markers or {}).items() if c is not None)
    lo, hi = x_extent(frame["distance"], cut, *(c for _, c in shown), pad=step)
    bins = mirrored_bins(frame, step=step) if bins is None else bins
    top = max(1, int(bins["y1"].max())) if len(bins) else 1
    bottom = min(-1, int(bins["y1"].min())) if len(bins) else -1
    y_top, y_bottom = top * 1.25, bottom * 1.25
    holders = np.isfinite(frame.loc[frame["key"] == "answer", "distance"].to_numpy(dtype=float)).sum()
    missing = int((frame["key"] == "kept").sum() - holders)
    # a marker's label takes a row of its own above the counts beside the cut (more headroom when there is one)
    return HistogramLayout(lo, hi, y_top, y_bottom, y_top * (1.3 if shown else 1.1), shown, missing)


def gate_values(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The gate's values the histogram counts at a cut: answerable queries' (closest answer-holding chunk) and
    off-topic queries' (closest chunk), as arrays."""
    answer = frame.loc[frame["key"] == "answer", "distance"].to_numpy(dtype=float)
    ood = frame.loc[frame["key"].isin(["near", "far", "ood"]), "distance"].to_numpy(dtype=float)
    return answer, ood


def histogram_title(frame: pd.DataFrame, cut: float, *, values: tuple[np.ndarray, np.ndarray] | None = None) -> str:
    """The histogram's title at ``cut``: the counts of answered and bluffing queries there. ``values``:
    :func:`gate_values` of ``frame`` when already at hand."""
    answered, bluffs = (int(under_each(v, cut).sum()) for v in (values or gate_values(frame)))
    return f"At cut {cut_text(cut)}: {answered} answered, {bluffs} off-topic bluff"


def histogram_cut_rows(frame: pd.DataFrame, *, cut: float, layout: HistogramLayout,
                       values: tuple[np.ndarray, np.ndarray] | None = None) -> dict[str, list[dict]]:
    """The rows of the histogram's data sets that hold the cut: the cut's rule and the counts on each side.
    ``values``: :func:`gate_values` of ``frame`` when already at hand."""
    cut = float(cut)
    answer, ood = values or gate_values(frame)
    n_answer, n_bluff = (int(under_each(v, cut).sum()) for v in (answer, ood))  # the gate's one rule (core.gate)
    y_top, y_bottom = float(layout.y_top), float(layout.y_bottom)
    return {HISTOGRAM_CUT: [{"cut": cut}],
            COUNTS_RIGHT: [{"x": cut, "y": y_top, "text": f"answered {n_answer} ←", "align": "right"},
                           {"x": cut, "y": y_bottom, "text": f"bluff {n_bluff} ←", "align": "right"}],
            COUNTS_LEFT: [{"x": cut, "y": y_top, "text": f"→ over the cut {answer.size - n_answer}", "align": "left"},
                          {"x": cut, "y": y_bottom, "text": f"→ correctly refused {ood.size - n_bluff}",
                           "align": "left"}]}


def histogram_frame(frame: pd.DataFrame, *, layout: HistogramLayout, step: float = 0.02,
                    title: str = "") -> alt.LayerChart:
    """The mirrored histogram without the cut: its layers that show the cut read the named data sets of
    :func:`histogram_cut_rows` (the chart carries none of their rows)."""
    bins = mirrored_bins(frame, step=step)
    lo, hi = layout.lo, layout.hi
    x = alt.X("start:Q", title="distance of the closest chunk (cosine)", scale=alt.Scale(domain=[lo, hi], nice=False))
    color = alt.Color("series:N", title=None,
                      scale=alt.Scale(domain=list(SERIES_COLORS), range=list(SERIES_COLORS.values())),
                      legend=alt.Legend(orient="top", labelLimit=0))
    bars = alt.Chart(bins).mark_bar(binSpacing=0, stroke="white", strokeWidth=0.5).encode(
        x=x, x2=alt.X2("end:Q"), y2=alt.Y2("y0:Q"),
        y=alt.Y("y1:Q", title="queries (answerable ↑, off-topic ↓)",
                scale=alt.Scale(domain=[layout.y_bottom * 1.1, layout.y_ceiling]),
                axis=alt.Axis(labelExpr="abs(datum.value)", tickMinStep=1, format="d")),
        color=color,
        tooltip=[alt.Tooltip("series:N"), alt.Tooltip("start:Q", format=".3f", title="from"),
                 alt.Tooltip("end:Q", format=".3f", title="to"), alt.Tooltip("count:Q", title="queries")],
    )
    zero = alt.Chart(pd.DataFrame({"y": [0]})).mark_rule(color="#9e9e9e").encode(y=alt.Y("y:Q"))
    rule = alt.Chart(alt.NamedData(name=HISTOGRAM_CUT)).mark_rule(color=NEUTRAL, strokeDash=[4, 3], strokeWidth=2).encode(
        x=alt.X("cut:Q"), tooltip=[alt.Tooltip("cut:Q", format=".4f")])
    labels = [alt.Chart(alt.NamedData(name=name)).mark_text(align=a, dx=-6 if a == "right" else 6, fontSize=12,
                                                             color=NEUTRAL)
              .encode(x=alt.X("x:Q"), y=alt.Y("y:Q"), text=alt.Text("text:N"))
              for name, a in ((COUNTS_RIGHT, "right"), (COUNTS_LEFT, "left"))]
    more = _marker_layers(dict(layout.markers), y=layout.y_ceiling, lo=lo, hi=hi)
    return alt.layer(bars, zero, rule, *labels, *more).resolve_scale(color="independent").properties(
        height=PLOT_HEIGHT, autosize=FIT_X,
        title=alt.TitleParams(title, anchor="start",  # short lines: the chart's half of the page holds them whole
                              subtitleColor=NEUTRAL, subtitle=["answerable: the closest chunk holding the answer",
                                                               f"({layout.missing} with none in the top keep are "
                                                               "never answered);", "off-topic: the closest chunk"]))


def mirrored_histogram(frame: pd.DataFrame, *, cut: float, step: float = 0.02, title: str | None = None,
                       markers: dict[str, float | None] | None = None) -> alt.Chart:
    """Answerable queries' closest answer-holding chunk above the axis, off-topic queries' closest chunk below
    (near and far shaded), the cut across both and the counts on each side of it.

    ``markers``: more cuts drawn as labelled rules across both halves (e.g. ``{"you run today": 0.53}``), in
    :data:`MARKER_COLORS`; the x range stretches to show them.

    The cut's rule and counts are the named data sets of :func:`histogram_cut_rows`, carried in the chart's
    ``datasets``; :func:`histogram_frame` is the same chart without them."""
    layout = histogram_layout(frame, cut=cut, step=step, markers=markers)
    chart = histogram_frame(frame, layout=layout, step=step, title=title or histogram_title(frame, cut))
    return chart.properties(datasets=histogram_cut_rows(frame, cut=cut, layout=layout))


def _marker_layers(markers: dict[str, float], *, y: float, lo: float, hi: float) -> list[alt.Chart]:
    """Labelled dashed rules for ``markers`` (name -> cut) on a chart whose y scale is the data's: the label at
    ``y``, left of its rule near the right edge."""
    if not markers:
        return []
    marks = pd.DataFrame([{"name": n, "cut": c, "y": y, "right": c > lo + 0.7 * (hi - lo)} for n, c in markers.items()])
    color = alt.Color("name:N", legend=None, scale=alt.Scale(domain=list(MARKER_COLORS),
                                                             range=list(MARKER_COLORS.values())))
    layers = [alt.Chart(marks).mark_rule(strokeDash=[6, 2], strokeWidth=2).encode(
        x=alt.X("cut:Q"), color=color, tooltip=[alt.Tooltip("name:N"), alt.Tooltip("cut:Q", format=".4f")])]
    for right, part in marks.groupby("right"):
        layers.append(alt.Chart(part).mark_text(align="right" if right else "left", baseline="top",
                                                dx=-4 if right else 4, fontSize=11, fontWeight="bold").encode(
            x=alt.X("cut:Q"), y=alt.Y("y:Q"), text=alt.Text("name:N"), color=color))
    return layers


def tradeoff_wide(curve: pd.DataFrame) -> pd.DataFrame:
    """One row per cut: answered and bluffs, each as a count and a rate (from ``frames.sweep_frame`` with rates)."""
    parts = []
    for outcome, name in (("answered", "answered"), ("bluffs (all ood)", "bluffs")):
        part = curve[curve["outcome"] == outcome][["cut", "queries", "rate", "low", "high"]].copy()
        part.insert(1, "measure", name)
        parts.append(part)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def flips(cuts, ids, values, *, show: int = 3) -> list[str]:
    """Per cut of the sorted grid ``cuts``: the queries whose value is in ``[previous cut, cut)`` (they change
    outcome between the previous step and this one; under the first cut: every value below it), closest first,
    ``show`` named and the rest as ``+N more``; a dash when none.

    >>> flips([0.2, 0.4, 0.6], ["a", "b", "c", "d"], [0.1, 0.3, 0.35, 0.9], show=1)
    ['a', 'b +1 more', '–']
    """
    cuts = np.asarray(cuts, dtype=float)
    values = np.asarray(values, dtype=float)
    order = np.argsort(values, kind="stable")
    ids, values = [ids[i] for i in order], values[order]
    out, prev = [], -np.inf
    for c in cuts:
        lo, hi = np.searchsorted(values, prev, side="left"), np.searchsorted(values, c, side="left")
        names = ids[lo:hi]
        more = f" +{len(names) - show} more" if len(names) > show else ""
        out.append(", ".join(names[:show]) + more if names else "–")
        prev = c
    return out


#: Marker labels: their font size, a width per character that no common sans-serif exceeds on average at that size,
#: the gap to their rule, a lane's height, and the narrowest and widest plots they are laid out for.
LABEL_FONT, LABEL_CHAR_PX, LABEL_DX, LANE_PX, MIN_PLOT_PX, MAX_PLOT_PX = 11, 6.9, 4, 14, 240, 2000


def label_layout(names, cuts, *, lo: float, hi: float, width_px: float = MIN_PLOT_PX,
                 max_width_px: float = MAX_PLOT_PX) -> list[tuple[int, bool]]:
    """Per marker label, ``(lane, right)``: the text row it takes (0 at the top) and whether it sits left of its rule
    (``right``-aligned: it would run past the plot's right edge otherwise), so that no two labels' boxes intersect
    on any plot from ``width_px`` to ``max_width_px`` wide.

    On a wider plot the rules move apart and the texts keep their size: two labels on the same side of their rules
    apart on the narrowest plot are apart on every wider one, but a label left of its rule and one right of a rule
    further left face each other and meet as the plot widens. So two labels share a lane only when their boxes are
    apart at every width (each box edge moves linearly with the width: the ends of the range and the widths where
    two edges meet are the ones to check). In order of their left edge, each label takes the first lane whose
    labels it never meets.

    >>> label_layout(["proposed", "on screen", "today"], [0.50, 0.51, 0.95], lo=0.0, hi=1.0)
    [(0, False), (1, False), (0, True)]
    >>> label_layout(["default", "conformal"], [0.7578125, 0.78125], lo=0.0, hi=1.0)  # they face each other
    [(1, False), (0, True)]
    """
    span = max(hi - lo, 1e-9)
    # a box at plot width W spans [f W + a, f W + b]: f the rule's place in the range, a and b the text's ends
    boxes, rights = [], []
    for name, cut in zip(names, cuts):
        f, w = (float(cut) - lo) / span, len(str(name)) * LABEL_CHAR_PX
        right = f * width_px + LABEL_DX + w > width_px and f * width_px - LABEL_DX - w >= 0
        boxes.append((f, -LABEL_DX - w, -LABEL_DX) if right else (f, LABEL_DX, LABEL_DX + w))
        rights.append(right)

    def meet(p, q) -> bool:
        widths = {width_px, max_width_px}
        for (f1, a1, _), (f2, _, b2) in ((p, q), (q, p)):  # the widths where one's start meets the other's end
            if f1 != f2:
                widths.add(min(max((b2 + 2 - a1) / (f1 - f2), width_px), max_width_px))
        return any(p[0] * W + p[1] < q[0] * W + q[2] + 2 and q[0] * W + q[1] < p[0] * W + p[2] + 2
                   for w0 in widths for W in (w0 - 1e-6, w0, w0 + 1e-6) if width_px <= W <= max_width_px)

    lanes: list[list[int]] = []
    out: list[tuple[int, bool]] = [(0, False)] * len(boxes)
    for i in sorted(range(len(boxes)), key=lambda i: boxes[i][0] * width_px + boxes[i][1]):
        lane = next((j for j, members in enumerate(lanes) if not any(meet(boxes[i], boxes[m]) for m in members)),
                    len(lanes))
        if lane == len(lanes):
            lanes.append([])
        lanes[lane].append(i)
        out[i] = (lane, rights[i])
    return out


def tradeoff_marks(cut: float, markers: dict[str, float | None] | None = None, *,
                   extent: tuple[float, float] | None = None) -> dict[str, list[dict]]:
    """The rows of the trade-off's data sets that hold the cut: the cut on screen and ``markers`` inside ``extent``
    as labelled rules (cuts that coincide share one rule, named together), each label in its lane and on its side
    (:func:`label_layout`); the labels right of their rule and those left of it (near the right edge) apart."""
    lo, hi = extent or (0.0, 1.0)
    at: dict[float, list[str]] = {}  # cuts that coincide share one rule, named together
    for n, c in {"on screen": cut, **(markers or {})}.items():
        if c is not None and lo <= c <= hi:
            at.setdefault(round(float(c), 4), []).append(n)
    marks = pd.DataFrame([{"name": " = ".join(ns), "cut": c, "kind": ns[-1]} for c, ns in at.items()],
                         columns=["name", "cut", "kind"])
    if len(marks):  # labels beside their rule, one lane (14 px) per neighbour whose label it would touch
        layout = label_layout(marks["name"].tolist(), marks["cut"].tolist(), lo=lo, hi=hi)
        marks["y"] = [8 + LANE_PX * lane for lane, _ in layout]
        marks["right"] = [right for _, right in layout]  # near the right edge: the label goes left of its rule
    else:
        marks = marks.assign(y=pd.Series(dtype=float), right=pd.Series(dtype=bool))
    rows = marks.to_dict("records")
    return {CURVE_MARKS: rows, MARKS_LEFT: [r for r in rows if not r["right"]],
            MARKS_RIGHT: [r for r in rows if r["right"]]}


def tradeoff_frame(curve: pd.DataFrame, *, goal: float | None = None, goal_kind: str = "bluffs",
                   extent: tuple[float, float] | None = None, title: str | None = None,
                   queries: dict[str, tuple] | None = None, pick: str | None = None) -> alt.LayerChart:
    """The trade-off without the cut: its marker rules and labels read the named data sets of
    :func:`tradeoff_marks` (the chart carries none of their rows). Arguments as :func:`tradeoff_curve`."""
    long = tradeoff_wide(curve)
    if queries and len(long):
        long["changes here"] = "–"
        for measure, (ids, values) in queries.items():
            sel = long["measure"] == measure
            long.loc[sel, "changes here"] = flips(long.loc[sel, "cut"].to_numpy(), list(ids), values)
    lo, hi = extent or (0.0, 1.0)
    long = long[(long["cut"] >= lo) & (long["cut"] <= hi)]
    colors = {"answered": SERIES_COLORS[ANSWERABLE], "bluffs": SERIES_COLORS[NEAR]}
    x = alt.X("cut:Q", title="cut (cosine distance)", scale=alt.Scale(domain=[lo, hi], nice=False))
    color = alt.Color("measure:N", title=None, scale=alt.Scale(domain=list(colors), range=list(colors.values())),
                      legend=alt.Legend(orient="top", labelLimit=0))
    quiet = alt.Color("measure:N", legend=None, scale=alt.Scale(domain=list(colors), range=list(colors.values())))
    base = alt.Chart(long)
    band = base.mark_area(opacity=0.15, interpolate="step-after").encode(x=x, y=alt.Y("low:Q"), y2=alt.Y2("high:Q"), color=quiet)
    line = base.mark_line(interpolate="step-after").encode(
        x=x, y=alt.Y("rate:Q", title="share of its queries", scale=alt.Scale(domain=[0, 1]),
                     axis=alt.Axis(format="%")), color=color)
    hover = base.mark_point(size=80, opacity=0).encode(
        x=x, y=alt.Y("rate:Q"), color=quiet,
        tooltip=[alt.Tooltip("cut:Q", format=".4f"), alt.Tooltip("measure:N"), alt.Tooltip("queries:Q", title="queries"),
                 alt.Tooltip("rate:Q", format=".1%"), alt.Tooltip("low:Q", format=".1%", title="95% low"),
                 alt.Tooltip("high:Q", format=".1%", title="95% high"),
                 *([alt.Tooltip("changes here:N", title="change from the previous step")]
                   if "changes here" in long.columns else [])])
    if pick:
        hover = hover.add_params(alt.selection_point(name=pick, on="click", nearest=True, fields=["cut"]))
    layers = [band, line, hover]
    if goal is not None:
        layers.append(alt.Chart(pd.DataFrame({"goal": [goal], "text": [f"goal: {goal_kind} {pct(goal)}"]}))
                      .mark_rule(color=colors["bluffs" if goal_kind == "bluffs" else "answered"], strokeDash=[2, 2])
                      .encode(y=alt.Y("goal:Q"), tooltip=[alt.Tooltip("text:N")]))
    mcolor = alt.Color("kind:N", legend=None, scale=alt.Scale(domain=list(MARKER_COLORS),
                                                              range=list(MARKER_COLORS.values())))
    layers.append(alt.Chart(alt.NamedData(name=CURVE_MARKS)).mark_rule(strokeDash=[4, 3], strokeWidth=1.5).encode(
        x=alt.X("cut:Q"), color=mcolor, tooltip=[alt.Tooltip("name:N"), alt.Tooltip("cut:Q", format=".4f")]))
    for name, right in ((MARKS_LEFT, False), (MARKS_RIGHT, True)):
        layers.append(alt.Chart(alt.NamedData(name=name)).mark_text(
            align="right" if right else "left", baseline="middle", dx=-LABEL_DX if right else LABEL_DX,
            fontSize=LABEL_FONT).encode(x=alt.X("cut:Q"), y=alt.Y("y:Q", scale=None), text=alt.Text("name:N"),
                                        color=mcolor))
    return alt.layer(*layers).resolve_scale(color="independent").properties(
        height=PLOT_HEIGHT, autosize=FIT_X,
        title=alt.TitleParams(title or "Answered and bluffs at every cut", anchor="start",
                              subtitleColor=NEUTRAL, subtitle=["share of answerable and of off-topic queries, 95% bands;",
                                        "hover the curve for counts and the queries that change"
                                        + ("; click it to set the cut" if pick else "")]))


def tradeoff_curve(curve: pd.DataFrame, *, cut: float, goal: float | None = None, goal_kind: str = "bluffs",
                   markers: dict[str, float | None] | None = None, extent: tuple[float, float] | None = None,
                   title: str | None = None, queries: dict[str, tuple] | None = None,
                   pick: str | None = None) -> alt.Chart:
    """Answered and bluffs (share of their queries, 95% bands) against the cut; the goal as a line; the
    default, proposed and conformal cuts as labelled rules (labels in lanes, never over one another); a tooltip
    on the curve with the counts and, given ``queries`` (``{"answered": (ids, values), "bluffs": (ids,
    values)}``: the gate's value of each query), the queries that change outcome from the previous step.

    ``pick``: the name of a click selection on the curve (its ``cut`` field), for a page that sets the cut from a
    click (``st.altair_chart(..., on_select=...)``).

    The rules and their labels are the named data sets of :func:`tradeoff_marks`, carried in the chart's
    ``datasets``; :func:`tradeoff_frame` is the same chart without them."""
    chart = tradeoff_frame(curve, goal=goal, goal_kind=goal_kind, extent=extent, title=title, queries=queries,
                           pick=pick)
    return chart.properties(datasets=tradeoff_marks(cut, markers, extent=extent))
