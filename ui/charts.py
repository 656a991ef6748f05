"""Altair chart builders: pure ``DataFrame -> alt.Chart`` functions (no streamlit calls)."""

from __future__ import annotations

import altair as alt
import pandas as pd

__all__ = ["recall_chart", "distance_histogram", "tradeoff_chart", "pairwise_heatmap", "chunk_size_chart"]

OUTCOME_COLORS = {
    "answered": "#2e7d32",
    "kept but wrong": "#f9a825",
    "refused": "#78909c",
    "bluffs (ood)": "#c62828",
}
SERIES_COLORS = {
    "in-domain: to its answer": "#2e7d32",
    "in-domain: top-1": "#1565c0",
    "out-of-domain: top-1": "#c62828",
}


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
    return (bars + points).properties(height=320, title="Recall@k with 95% Wilson intervals")


def distance_histogram(df: pd.DataFrame, *, cut: float | None = None, step: float = 0.025) -> alt.Chart:
    """Overlaid histograms of cosine distances per series (``frames.distance_frame``)."""
    bars = (
        alt.Chart(df)
        .mark_bar(opacity=0.45, binSpacing=0)
        .encode(
            x=alt.X("distance:Q", bin=alt.Bin(step=step, extent=[0, 1]), title="cosine distance"),
            y=alt.Y("count():Q", stack=None, title="queries", axis=alt.Axis(tickMinStep=1, format="d")),
            color=alt.Color("series:N", scale=alt.Scale(domain=list(SERIES_COLORS), range=list(SERIES_COLORS.values())),
                            legend=alt.Legend(orient="bottom", title=None, labelLimit=300)),
            tooltip=["series:N", alt.Tooltip("count():Q", title="queries")],
        )
    )
    chart = bars if cut is None else bars + _cut_rule(cut)
    return chart.properties(height=260, title="Cosine distances of the three populations")


def tradeoff_chart(df: pd.DataFrame, *, cut: float | None = None) -> alt.Chart:
    """Answered, kept-but-wrong, refused and bluffs against the cut (``frames.sweep_frame``)."""
    lines = (
        alt.Chart(df)
        .mark_line(interpolate="step-after")
        .encode(
            x=alt.X("cut:Q", title="cut (cosine distance)", scale=alt.Scale(domain=[0, 1])),
            y=alt.Y("queries:Q", title="queries", axis=alt.Axis(tickMinStep=1, format="d")),
            color=alt.Color("outcome:N", scale=alt.Scale(domain=list(OUTCOME_COLORS), range=list(OUTCOME_COLORS.values())),
                            legend=alt.Legend(orient="bottom", title=None, labelLimit=300)),
            tooltip=[alt.Tooltip("cut:Q", format=".3f"), "outcome:N", "queries:Q"],
        )
    )
    chart = lines if cut is None else lines + _cut_rule(cut)
    return chart.properties(height=260, title="Trade-off: what the gate does at each cut")


def pairwise_heatmap(df: pd.DataFrame) -> alt.Chart:
    """Holm-corrected p of every pair; cell text is the row configuration's wins/losses (``frames.pairwise_matrix``)."""
    order = list(dict.fromkeys([*df["a"], *df["b"]])) if len(df) else []
    base = alt.Chart(df).encode(
        x=alt.X("b:N", title=None, sort=order, axis=alt.Axis(labelAngle=-45, orient="top")),
        y=alt.Y("a:N", title=None, sort=order),
        tooltip=["a:N", "b:N", "wins:Q", "losses:Q", "ties:Q", alt.Tooltip("p:Q", format=".4f"),
                 alt.Tooltip("p_holm:Q", format=".4f", title="p (Holm)")],
    )
    rect = base.mark_rect(stroke="white", strokeWidth=1).encode(
        color=alt.Color("p_holm:Q", title="p (Holm)",
                        scale=alt.Scale(domain=[0, 0.05, 1], range=["#1b5e20", "#a5d6a7", "#f5f5f5"]))
    )
    text = base.mark_text(fontSize=11).encode(
        text="label:N",
        color=alt.condition("datum.p_holm < 0.05", alt.value("white"), alt.value("black")),
    )
    return (rect + text).properties(width=alt.Step(64), height=alt.Step(28),
                                    title="Row vs column at R@k: wins/losses of the row; colour = Holm-corrected p")


def chunk_size_chart(sizes: pd.DataFrame) -> alt.Chart:
    """Distribution of chunk sizes (characters) per strategy (``frames.chunk_sizes``)."""
    return (
        alt.Chart(sizes)
        .mark_boxplot(extent="min-max")
        .encode(x=alt.X("chars:Q", title="characters per chunk"), y=alt.Y("strategy:N", title=None),
                color=alt.Color("strategy:N", legend=None))
        .properties(height=alt.Step(44), title="Chunk sizes")
    )
