"""The History page's frames and chart: the gate's measures over runs, each with its interval (pure builders).

:func:`trend_frame` turns the library's :class:`~ragdiag.present.history.TrendPoint`
records into one long table (a row per run and measure); :func:`trend_chart`
draws it: one panel per measure, a point per run with its 95% interval, the
gate's verdict as the point's shape and colour, the line broken wherever the
ground truth changed (drawn as a vertical rule), failed candidates as markers
off the line. A click on a point selects the run (:data:`PICK`).
"""

from __future__ import annotations

import warnings

import altair as alt
import pandas as pd

from ui.fmt import ACCENT
from ragdiag.core.words import interval

__all__ = ["MEASURES", "PICK", "trend_frame", "trend_chart", "truth_changes"]

#: The panels, in order: (measure key, title in plain words).
MEASURES = (("recall", "found in the top k"), ("answered", "answered"), ("bluffs", "bluffs (off-topic given sources)"),
            ("destroyed", "destroyed needles"))
#: The name of the click selection (a run).
PICK = "run_pick"
_VERDICTS = ["pass", "inconclusive", "fail", "not gated"]
_COLOURS = [ACCENT, "#ef6c00", "#c62828", "#9e9e9e"]
_SHAPES = ["circle", "diamond", "cross", "square"]


def trend_frame(points) -> pd.DataFrame:
    """One row per run and measure: run, label, verdict, accepted, segment, measure, value, low, high, text.

    >>> trend_frame([]).columns.tolist()[:6]
    ['run', 'time', 'label', 'verdict', 'accepted', 'segment']
    """
    rows = []
    for p in points:
        m, r = p.measures, p.run
        base = {"run": r.id, "time": r.time, "label": r.label or (r.commit[:8] if r.commit else ""),
                "verdict": r.verdict or "not gated", "accepted": r.accepted, "segment": p.segment}
        for key, title in MEASURES:
            if key == "destroyed":
                rows.append({**base, "measure": title, "value": float(m.destroyed), "low": None, "high": None,
                             "text": f"{m.destroyed} destroyed"})
                continue
            iv = getattr(m, key)
            if iv.trials == 0:
                continue
            rows.append({**base, "measure": title.replace("top k", f"top {m.k}"), "value": iv.estimate,
                         "low": iv.low, "high": iv.high,
                         "text": f"{interval(iv.estimate, iv.low, iv.high)}, "
                                 f"{iv.successes} of {iv.trials}"})
    cols = ["run", "time", "label", "verdict", "accepted", "segment", "measure", "value", "low", "high", "text"]
    return pd.DataFrame(rows, columns=cols)


def truth_changes(frame: pd.DataFrame) -> list[float]:
    """Where the ground truth changed: halfway between the last run of a segment and the first of the next."""
    runs = frame.drop_duplicates("run").sort_values("run")
    out = []
    for (a, sa), (b, sb) in zip(zip(runs["run"], runs["segment"]), zip(runs["run"][1:], runs["segment"][1:])):
        if sb != sa:
            out.append((a + b) / 2)
    return out


def _panel(frame: pd.DataFrame, title: str, rules: list[float], pick, *, width: int, height: int,
           rate: bool) -> alt.LayerChart:
    data = frame[frame["measure"] == title]
    x = alt.X("run:Q", title="run", axis=alt.Axis(tickMinStep=1, format="d"),
              scale=alt.Scale(domain=[float(frame["run"].min()) - 0.5, float(frame["run"].max()) + 0.5], nice=False))
    y_axis = alt.Axis(format=".0%") if rate else alt.Axis(tickMinStep=1, format="d")
    y = alt.Y("value:Q", title=None, axis=y_axis,
              scale=alt.Scale(domain=[0, 1]) if rate else alt.Scale(domainMin=0, nice=True))
    base = alt.Chart(data).encode(x=x)
    line = base.transform_filter(alt.datum.accepted).mark_line(color="#9e9e9e", strokeWidth=1.5).encode(
        y=y, detail="segment:N")
    layers = [line]
    if rate:
        layers.append(base.mark_rule(color="#757575", strokeWidth=1.5).encode(y="low:Q", y2="high:Q"))
    tooltip = [alt.Tooltip("run:Q", title="run"), alt.Tooltip("label:N", title="label"),
               alt.Tooltip("time:N", title="time"), alt.Tooltip("verdict:N", title="gate"),
               alt.Tooltip("text:N", title=title)]
    layers.append(base.mark_point(filled=True, size=90).encode(
        y=y,
        color=alt.Color("verdict:N", title="gate verdict", scale=alt.Scale(domain=_VERDICTS, range=_COLOURS)),
        shape=alt.Shape("verdict:N", title="gate verdict", scale=alt.Scale(domain=_VERDICTS, range=_SHAPES)),
        opacity=alt.condition(pick, alt.value(1.0), alt.value(0.35)),
        tooltip=tooltip).add_params(pick))
    if rules:
        layers.append(alt.Chart(pd.DataFrame({"run": rules})).mark_rule(color="#424242", strokeDash=[4, 3]).encode(
            x="run:Q"))
    return alt.layer(*layers).properties(title=title, width=width, height=height)


def trend_chart(frame: pd.DataFrame, *, config: str, width: int = 340, height: int = 240) -> alt.VConcatChart:
    """The four panels (two by two) of :func:`trend_frame`'s table; a click on a point picks the run."""
    pick = alt.selection_point(name=PICK, fields=["run"], on="click", clear="dblclick")
    rules = truth_changes(frame)
    panels = [_panel(frame, t, rules, pick, width=width, height=height, rate=t != "destroyed needles")
              for t in dict.fromkeys(frame["measure"])]
    n = frame["run"].nunique()
    subtitle = ["each point a run, with its 95% interval; the shape is the gate's verdict; a dashed rule: the "
                "ground truth changed (no trend across it)"]
    with warnings.catch_warnings():  # one click selection shared by the four panels is the point: no warning
        warnings.filterwarnings("ignore", message="Automatically deduplicated selection parameter")
        rows = [alt.hconcat(*panels[i:i + 2]) for i in range(0, len(panels), 2)]
        chart = alt.vconcat(*rows).properties(
            title=alt.Title(f"{config} over the last {n} runs", subtitle=subtitle, anchor="start")
        ).configure_legend(orient="top")
        chart.to_dict()  # the deduplication happens here, once; Streamlit serialises the same chart again
    return chart
