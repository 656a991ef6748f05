"""Altair chart builders: pure ``DataFrame -> alt.Chart`` functions (no streamlit calls)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from ragdiag.defaults import ALPHA

__all__ = ["pairwise_heatmap", "chunk_size_chart"]

def pairwise_heatmap(df: pd.DataFrame, *, text_up_to: int = 8) -> alt.Chart:
    """Holm-corrected p of every pair (``frames.pairwise_matrix``), fitted to the page's width; with at most
    ``text_up_to`` configurations each cell also shows the row's wins/losses (more would collide: the tooltip has
    them). Every column and row label is drawn."""
    order = list(dict.fromkeys([*df["a"], *df["b"]])) if len(df) else []
    axis = dict(labelOverlap=False, labelLimit=0)
    base = alt.Chart(df).encode(
        x=alt.X("b:N", title=None, sort=order, axis=alt.Axis(labelAngle=-45, orient="top", **axis)),
        y=alt.Y("a:N", title=None, sort=order, axis=alt.Axis(**axis)),
        tooltip=["a:N", "b:N", "wins:Q", "losses:Q", "ties:Q", alt.Tooltip("p:Q", format=".4f"),
                 alt.Tooltip("p_holm:Q", format=".4f", title="p (Holm)")],
    )
    rect = base.mark_rect(stroke="white", strokeWidth=1).encode(
        color=alt.Color("p_holm:Q", title="p (Holm)",
                        scale=alt.Scale(domain=[0, ALPHA, 1], range=["#1b5e20", "#a5d6a7", "#f5f5f5"]),
                        legend=alt.Legend(orient="top", gradientLength=160))
    )
    layers = [rect]
    if len(order) <= text_up_to:
        layers.append(base.mark_text(fontSize=11).encode(
            text="label:N", color=alt.condition(f"datum.p_holm < {ALPHA}", alt.value("white"), alt.value("black"))))
    return alt.layer(*layers).properties(
        height=alt.Step(22 if len(order) > text_up_to else 28),
        autosize=alt.AutoSizeParams(type="fit-x", contains="padding"),
        title=alt.TitleParams("Row against column: which configurations differ", anchor="start",
                              subtitle="colour: Holm-corrected p within the family shown; hover a cell for "
                                       "wins/losses over questions"))


def chunk_size_chart(sizes: pd.DataFrame) -> alt.Chart:
    """Distribution of chunk sizes (characters) per strategy (``frames.chunk_sizes``)."""
    return (
        alt.Chart(sizes)
        .mark_boxplot(extent="min-max")
        .encode(x=alt.X("chars:Q", title="characters per chunk"), y=alt.Y("strategy:N", title=None),
                color=alt.Color("strategy:N", legend=None))
        .properties(height=alt.Step(44), title="Chunk sizes")
    )
