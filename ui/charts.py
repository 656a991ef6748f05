"""Altair chart builders: pure ``DataFrame -> alt.Chart`` functions (no streamlit calls)."""

from __future__ import annotations

import altair as alt
import pandas as pd


__all__ = ["recall_chart", "distance_histogram", "tradeoff_chart", "chunk_size_chart"]

OUTCOME_COLORS = {
    "answered": "#2e7d32",
    "wrong sources": "#f9a825",
    "no answer": "#78909c",
    "bluffs (near ood)": "#c62828",
    "bluffs (far ood)": "#ff7043",
    "bluffs (all ood)": "#6a1b9a",
}
KEY_COLORS = {"answer": "#2e7d32", "kept": "#1565c0", "near": "#c62828", "far": "#ff7043", "ood": "#6a1b9a"}


def _cut_rule(cut: float) -> alt.Chart:
    return (
        alt.Chart(pd.DataFrame({"cut": [cut]}))
        .mark_rule(color="black", strokeDash=[4, 3], strokeWidth=2)
        .encode(x="cut:Q", tooltip=[alt.Tooltip("cut:Q", format=".3f")])
    )


def recall_chart(long: pd.DataFrame) -> alt.Chart:
    """Recall@k per configuration with 95% Wilson interval bars (``frames.recall_long``)."""
    base = alt.Chart(long).encode(
        x=alt.X("k:O", title="k (top-k chunks)", axis=alt.Axis(labelAngle=0)),
        color=alt.Color("config:N", title="configuration"),
        xOffset=alt.XOffset("config:N"),
    )
    tooltip = ["config:N", "k:O", alt.Tooltip("recall:Q", format=".3f"), alt.Tooltip("low:Q", format=".3f"),
               alt.Tooltip("high:Q", format=".3f"), "hits:Q", "queries:Q"]
    bars = base.mark_rule(strokeWidth=2).encode(y=alt.Y("low:Q", title="recall@k", scale=alt.Scale(domain=[0, 1])),
                                                y2="high:Q", tooltip=tooltip)
    points = base.mark_point(filled=True, size=60).encode(y="recall:Q", tooltip=tooltip)
    return (bars + points).properties(height=320, title="Recall@k with 95% intervals over questions")


def distance_histogram(df: pd.DataFrame, *, cut: float | None = None, step: float = 0.025) -> alt.Chart:
    """Overlaid histograms of the gate's own per-query values (``frames.distance_frame``).

    Every plotted value is one the gate compares with the cut, so the bars left of
    the cut line add up to the table's counts at that cut.
    """
    series = list(dict.fromkeys(df["series"])) if len(df) else []
    keys = list(dict.fromkeys(df["key"])) if len(df) else []
    colors = [KEY_COLORS.get(k, "#455a64") for k in keys]
    bars = (
        alt.Chart(df)
        .mark_bar(opacity=0.45, binSpacing=0)
        .encode(
            x=alt.X("distance:Q", bin=alt.Bin(step=step, extent=[0, 1]), title="cosine distance (dense model)"),
            y=alt.Y("count():Q", stack=None, title="queries", axis=alt.Axis(tickMinStep=1, format="d")),
            color=alt.Color("series:N", scale=alt.Scale(domain=series, range=colors),
                            legend=alt.Legend(orient="bottom", title=None, labelLimit=360, columns=2)),
            tooltip=["series:N", alt.Tooltip("count():Q", title="queries")],
        )
    )
    chart = bars if cut is None else bars + _cut_rule(cut)
    return chart.properties(height=260, title="The distances the gate compares with the cut")


def tradeoff_chart(df: pd.DataFrame, *, cut: float | None = None) -> alt.Chart:
    """Rates of answered, wrong sources, no answer and near/far bluffs against the cut, with 95% bands
    (``frames.sweep_frame`` with rates)."""
    color = alt.Color("outcome:N", scale=alt.Scale(domain=list(OUTCOME_COLORS), range=list(OUTCOME_COLORS.values())),
                      legend=alt.Legend(orient="bottom", title=None, labelLimit=300, columns=3))
    x = alt.X("cut:Q", title="cut (cosine distance, dense model)", scale=alt.Scale(domain=[0, 1]))
    base = alt.Chart(df)
    band = base.mark_area(opacity=0.15, interpolate="step-after").encode(x=x, y="low:Q", y2="high:Q", color=color)
    lines = base.mark_line(interpolate="step-after").encode(
        x=x,
        y=alt.Y("rate:Q", title="share of its queries", scale=alt.Scale(domain=[0, 1])),
        color=color,
        tooltip=[alt.Tooltip("cut:Q", format=".3f"), "outcome:N", "queries:Q", alt.Tooltip("rate:Q", format=".3f"),
                 alt.Tooltip("low:Q", format=".3f"), alt.Tooltip("high:Q", format=".3f")],
    )
    chart = band + lines if cut is None else band + lines + _cut_rule(cut)
    return chart.properties(height=260, title="Trade-off: what the gate does at each cut (95% bands)")


def chunk_size_chart(sizes: pd.DataFrame) -> alt.Chart:
    """Distribution of chunk sizes (characters) per strategy (``frames.chunk_sizes``)."""
    return (
        alt.Chart(sizes)
        .mark_boxplot(extent="min-max")
        .encode(x=alt.X("chars:Q", title="characters per chunk"), y=alt.Y("strategy:N", title=None),
                color=alt.Color("strategy:N", legend=None))
        .properties(height=alt.Step(44), title="Chunk sizes")
    )
